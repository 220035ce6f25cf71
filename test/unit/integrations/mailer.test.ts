// The mail settings and templates, in the files of upstream's crownmail chart. Sending is tested on
// a real SMTP relay (test/integration-e62be9e/inactivity.test.ts).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTransport } from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { fillPlaceholders, Mailer, MailConfigError, readSmtpSettings } from '../../../src/integrations/mail/mailer.ts';

const dir = (files: Record<string, string>) => {
  const d = mkdtempSync(path.join(tmpdir(), 'mail-'));
  for (const [f, text] of Object.entries(files)) writeFileSync(path.join(d, f), text);
  return d;
};
const ph = { tenantName: 'ivy', tenantEmail: 'ivy@example.org', prettyName: 'Green Tea', instanceName: 'green-1', remainingTime: '48h0m0s' };

describe('readSmtpSettings', () => {
  it('reads upstream\'s smtp-config.yaml: STARTTLS required by default, implicit TLS on 465, the CA relative to the directory', () => {
    const d = dir({ 'smtp-config.yaml': 'smtpServer: smtp.example.org\nsmtpPort: "587"\nsmtpIdentity: ""\nsmtpUsername: u\nsmtpPassword: p\nsmtpFrom: noreply@example.org\nsmtpCAFile: ca.crt\n' });
    expect(readSmtpSettings(d)).toEqual({ server: 'smtp.example.org', port: 587, username: 'u', password: 'p', from: 'noreply@example.org', security: 'starttls', caFile: path.join(d, 'ca.crt') });
    expect(readSmtpSettings(dir({ 'smtp-config.yaml': 'smtpServer: s\nsmtpPort: 465\nsmtpFrom: f@x\n' })).security).toBe('tls');
  });

  it('names the file and the key that is wrong', () => {
    expect(() => readSmtpSettings(dir({}))).toThrow(/smtp-config.yaml: not found/);
    expect(() => readSmtpSettings(dir({ 'smtp-config.yaml': 'smtpPort: 25\nsmtpFrom: f@x\n' }))).toThrow(/smtp-config.yaml: smtpServer is missing/);
    expect(() => readSmtpSettings(dir({ 'smtp-config.yaml': 'smtpServer: s\nsmtpPort: "99999"\nsmtpFrom: f@x\n' }))).toThrow(/smtpPort "99999" is not a port/);
    expect(() => readSmtpSettings(dir({ 'smtp-config.yaml': 'smtpServer: s\nsmtpFrom: f@x\nsmtpSecurity: ssl\n' }))).toThrow(MailConfigError);
    expect(() => readSmtpSettings(dir({ 'smtp-config.yaml': '[a' }))).toThrow(/not YAML/);
  });
});

describe('Mailer.compose', () => {
  const settings = { server: '127.0.0.1', port: 2525, from: 'noreply@crownlabs.test', security: 'none' as const };

  it('fills the built-in wording, and a template directory overrides it file by file and key by key', () => {
    const builtIn = new Mailer(settings, undefined).compose('inactivity-warning', ph, 'uid.warn.1.0');
    expect(builtIn).toMatchObject({ from: 'noreply@crownlabs.test', to: 'ivy@example.org', subject: 'CrownLabs: Green Tea looks idle', messageId: '<uid.warn.1.0@crownlabs>' });
    expect(builtIn.text).toContain('within 48h0m0s');
    expect(builtIn.text).toContain('Hello ivy,');
    const d = dir({ 'instautoctrl_inactivity_notification.yaml': 'subject: |-\n  Idle: { prettyName }\nplaintext_content: |-\n  Use {instanceName} or lose it in {  remainingTime }.\n' });
    const own = new Mailer(settings, d).compose('inactivity-warning', ph, 'x');
    expect(own.subject).toBe('Idle: Green Tea');
    expect(own.text).toContain('Use green-1 or lose it in 48h0m0s.');
    expect(own.to).toBe('ivy@example.org'); // the key it did not override
    expect(new Mailer(settings, d).compose('destruction', ph, 'y').subject).toBe('CrownLabs: Green Tea was deleted');
  });

  it('a recipient with a line break is refused before any connection; a subject with one stays one header', async () => {
    const injected = { ...ph, tenantEmail: 'ivy@example.org\r\nBcc: evil@example.org', prettyName: 'Green\r\nBcc: evil@example.org\u2028X: y' };
    const m = new Mailer({ ...settings, port: 1 }, undefined);
    await expect(m.send(m.compose('inactivity-warning', injected, 'x'))).rejects.toThrow(/holds a line break or control character/);
    const own = dir({ 'instautoctrl_inactivity_notification.yaml': 'to: "{ prettyName }"\n' });
    await expect(new Mailer({ ...settings, port: 1 }, own).send(new Mailer(settings, own).compose('inactivity-warning', { ...injected, tenantEmail: 'ivy@example.org' }, 'x'))).rejects.toThrow(/line break/);
    const raw = await createTransport({ streamTransport: true, buffer: true }).sendMail(m.compose('inactivity-warning', { ...injected, tenantEmail: 'ivy@example.org' }, 'x'));
    const head = String(raw.message).split(/\r?\n\r?\n/)[0];
    expect(head).not.toMatch(/^Bcc:/im);
    expect(raw.envelope.to).toEqual(['ivy@example.org']);
  });

  it('leaves an unknown placeholder as written', () => {
    expect(fillPlaceholders('{ tenantName } { nope }', { tenantName: 'ivy' })).toBe('ivy { nope }');
  });
});
