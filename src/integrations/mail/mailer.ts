/**
 * E-mail to tenants over SMTP (docs/behaviour.md §8.5). The settings and templates keep the files of
 * upstream's `crownmail` chart, so a lab's Secret and ConfigMap carry over: `smtp-config.yaml` in the
 * configuration directory, one YAML file per message (`to`, `subject`, `plaintext_content`,
 * `html_content`) and `defaults_crownlabs_headers.yaml` in the template directory. A file the
 * directory lacks falls back to the built-in wording (templates.ts). Nodemailer does the SMTP.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { load } from 'js-yaml';
import { createTransport, type Transporter } from 'nodemailer';
import { BUILT_IN_HEADERS, BUILT_IN_TEMPLATES, type MailKind } from './templates.ts';

export interface SmtpSettings {
  server: string;
  port: number;
  username?: string;
  password?: string;
  from: string;
  /** `starttls` (default; required, not opportunistic), `tls` (implicit, the default on 465) or `none` (loopback relays only). */
  security: 'starttls' | 'tls' | 'none';
  /** PEM file of the CA that signed the relay's certificate, when not a public one (relative: to the configuration directory). */
  caFile?: string;
}

export interface MailPlaceholders {
  tenantName: string;
  tenantEmail: string;
  prettyName: string;
  instanceName: string;
  remainingTime: string;
}

export class MailConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MailConfigError';
  }
}

function readYamlFile(file: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new MailConfigError(`${file}: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = load(text);
  } catch (e) {
    throw new MailConfigError(`${file}: not YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new MailConfigError(`${file}: not a YAML mapping`);
  return doc as Record<string, unknown>;
}

/** Reads `<dir>/smtp-config.yaml` (upstream's keys, plus `smtpSecurity` and `smtpCAFile`). */
export function readSmtpSettings(dir: string): SmtpSettings {
  const file = join(dir, 'smtp-config.yaml');
  const doc = readYamlFile(file);
  if (!doc) throw new MailConfigError(`${file}: not found`);
  const str = (k: string): string | undefined => (doc[k] === undefined || doc[k] === null || doc[k] === '' ? undefined : String(doc[k]));
  const server = str('smtpServer');
  const from = str('smtpFrom');
  if (!server) throw new MailConfigError(`${file}: smtpServer is missing`);
  if (!from) throw new MailConfigError(`${file}: smtpFrom is missing`);
  const port = Number(str('smtpPort') ?? '587');
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new MailConfigError(`${file}: smtpPort ${JSON.stringify(doc.smtpPort)} is not a port`);
  const security = str('smtpSecurity') ?? (port === 465 ? 'tls' : 'starttls');
  if (security !== 'starttls' && security !== 'tls' && security !== 'none') throw new MailConfigError(`${file}: smtpSecurity ${JSON.stringify(security)} is none of starttls, tls, none`);
  // Relative: beside smtp-config.yaml, so the CA can travel in the same Secret.
  const ca = str('smtpCAFile');
  return { server, port, from, security, username: str('smtpUsername'), password: str('smtpPassword'), caFile: ca === undefined ? undefined : resolve(dir, ca) };
}

/** `{ name }` placeholders, spaces optional, as upstream's templates write them. */
export function fillPlaceholders(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(/\{\s*([A-Za-z][\w-]*)\s*\}/g, (whole, name: string) => (name in values ? values[name] : whole));
}

export interface ComposedMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
}

export class Mailer {
  private readonly transport: Transporter;

  constructor(
    readonly settings: SmtpSettings,
    private readonly templateDir: string | undefined,
    timeoutMs = 10_000,
  ) {
    let ca: string | undefined;
    if (settings.caFile) {
      try {
        ca = readFileSync(settings.caFile, 'utf8');
      } catch (e) {
        throw new MailConfigError(`smtpCAFile ${settings.caFile}: ${(e as Error).message}`);
      }
    }
    this.transport = createTransport({
      host: settings.server,
      port: settings.port,
      secure: settings.security === 'tls',
      requireTLS: settings.security === 'starttls',
      ignoreTLS: settings.security === 'none',
      ...(settings.username ? { auth: { user: settings.username, pass: settings.password ?? '' } } : {}),
      tls: { minVersion: 'TLSv1.2', ...(ca ? { ca } : {}) },
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    });
  }

  private template(kind: MailKind): Record<string, string> {
    const file = BUILT_IN_TEMPLATES[kind].file;
    const own = this.templateDir ? readYamlFile(join(this.templateDir, file)) : undefined;
    const base = BUILT_IN_TEMPLATES[kind].content;
    return own ? { ...base, ...stringValues(own) } : base;
  }

  private headers(): Record<string, string> {
    const own = this.templateDir ? readYamlFile(join(this.templateDir, 'defaults_crownlabs_headers.yaml')) : undefined;
    return own ? { ...BUILT_IN_HEADERS, ...stringValues(own) } : BUILT_IN_HEADERS;
  }

  /** The message of one step; `id` makes its Message-ID, the same for a resend of the same step. */
  compose(kind: MailKind, ph: MailPlaceholders, id: string): ComposedMail {
    const values = { ...ph } as unknown as Record<string, string>;
    const t = this.template(kind);
    const h = this.headers();
    const fill = (s: string | undefined) => fillPlaceholders(s ?? '', values);
    return {
      from: this.settings.from,
      to: fill(t.to).trim(),
      subject: fill(t.subject).trim(),
      text: [fill(h.plaintext_header), fill(t.plaintext_content), fill(h.plaintext_footer)].filter(Boolean).join('\n'),
      html: [fill(h.html_header), fill(t.html_content), fill(h.html_footer)].filter(Boolean).join('\n'),
      messageId: `<${id}@crownlabs>`,
    };
  }

  /** Connects and authenticates, then hangs up: throws when the relay cannot take a message now. */
  async verify(): Promise<void> {
    await this.transport.verify();
  }

  async send(mail: ComposedMail): Promise<void> {
    if (!mail.to) throw new Error('the message has no recipient (the Tenant has no e-mail address)');
    // A line break in the recipient turns into other addresses in the address parser: a template
    // that fills `to` from a field a tenant writes must not choose who else gets the mail.
    if (/[\u0000-\u001f\u007f\u0085\u2028\u2029]/.test(mail.to)) throw new Error(`the recipient ${JSON.stringify(mail.to.slice(0, 80))} holds a line break or control character`);
    await this.transport.sendMail(mail);
  }

  close(): void {
    this.transport.close();
  }
}

function stringValues(doc: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(doc)) if (typeof v === 'string' || typeof v === 'number') out[k] = String(v);
  return out;
}
