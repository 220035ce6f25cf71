/**
 * The built-in wording of the tenant mails (our own), under the file names of upstream's `crownmail`
 * chart, which a template directory overrides file by file and key by key.
 */

export type MailKind = 'inactivity-warning' | 'inactivity-stopped' | 'destruction-warning' | 'destruction';

export const BUILT_IN_TEMPLATES: Readonly<Record<MailKind, { file: string; content: Record<string, string> }>> = {
  'inactivity-warning': {
    file: 'instautoctrl_inactivity_notification.yaml',
    content: {
      to: '{ tenantEmail }',
      subject: 'CrownLabs: { prettyName } looks idle',
      plaintext_content:
        'Nobody has opened your instance { prettyName } ({ instanceName }) for a while, neither in the browser nor over SSH.\n' +
        'Unless it is used within { remainingTime }, it will be paused (persistent instances) or deleted (the others) to free the lab for others.',
      html_content:
        '<p>Nobody has opened your instance <strong>{ prettyName }</strong> ({ instanceName }) for a while, neither in the browser nor over SSH.</p>\n' +
        '<p>Unless it is used within <strong>{ remainingTime }</strong>, it will be paused (persistent instances) or deleted (the others) to free the lab for others.</p>',
    },
  },
  'inactivity-stopped': {
    file: 'instautoctrl_inactivity_stopped_notification.yaml',
    content: {
      to: '{ tenantEmail }',
      subject: 'CrownLabs: { prettyName } was stopped after a long idle time',
      plaintext_content:
        'Your instance { prettyName } ({ instanceName }) was not used after the warnings we sent.\n' +
        'A persistent instance is now paused and keeps its disk: start it again from the dashboard. Any other instance has been deleted.',
      html_content:
        '<p>Your instance <strong>{ prettyName }</strong> ({ instanceName }) was not used after the warnings we sent.</p>\n' +
        '<p>A persistent instance is now paused and keeps its disk: start it again from the dashboard. Any other instance has been deleted.</p>',
    },
  },
  'destruction-warning': {
    file: 'instautoctrl_destruction_warning_notification.yaml',
    content: {
      to: '{ tenantEmail }',
      subject: 'CrownLabs: { prettyName } will be deleted',
      plaintext_content:
        'Your instance { prettyName } ({ instanceName }) has been powered off for a long time.\n' +
        'Unless you start it within { remainingTime }, it will be deleted together with its disk.',
      html_content:
        '<p>Your instance <strong>{ prettyName }</strong> ({ instanceName }) has been powered off for a long time.</p>\n' +
        '<p>Unless you start it within <strong>{ remainingTime }</strong>, it will be deleted together with its disk.</p>',
    },
  },
  destruction: {
    file: 'instautoctrl_destruction_notification.yaml',
    content: {
      to: '{ tenantEmail }',
      subject: 'CrownLabs: { prettyName } was deleted',
      plaintext_content: 'Your instance { prettyName } ({ instanceName }) stayed powered off after our warnings and has been deleted with its disk.',
      html_content: '<p>Your instance <strong>{ prettyName }</strong> ({ instanceName }) stayed powered off after our warnings and has been deleted with its disk.</p>',
    },
  },
};

export const BUILT_IN_HEADERS: Readonly<Record<string, string>> = {
  plaintext_header: 'Hello { tenantName },\n',
  plaintext_footer: '\n-- \nCrownLabs (an automated message)',
  html_header: '<!DOCTYPE html>\n<html><body style="font-family: sans-serif">\n<p>Hello { tenantName },</p>',
  html_footer: '<p style="color: #666">CrownLabs (an automated message)</p>\n</body></html>',
};
