import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { remoteIp } from '../../../src/userpods/server.ts';

const req = (remoteAddress: string, forwarded?: string) =>
  ({ headers: forwarded ? { 'x-forwarded-for': forwarded } : {}, socket: { remoteAddress } }) as unknown as http.IncomingMessage;

describe('seed 004: the requester (silo) IP', () => {
  it('is the first X-Forwarded-For address behind a proxy or ingress', () => {
    expect(remoteIp(req('10.2.0.5', '10.0.0.21, 10.2.0.5'), '10.0.0.20')).toBe('10.0.0.21');
  });
  it('is the peer address otherwise, without the IPv4-mapped prefix', () => {
    expect(remoteIp(req('::ffff:10.0.0.22'), '10.0.0.20')).toBe('10.0.0.22');
  });
  it('stands for testingHost when the request comes from loopback (a test)', () => {
    expect(remoteIp(req('127.0.0.1'), '10.0.0.20')).toBe('10.0.0.20');
    expect(remoteIp(req('::1'), '10.0.0.20')).toBe('10.0.0.20');
  });
});
