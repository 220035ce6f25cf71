/**
 * The flags of the inactivity automation (docs/behaviour.md §8.4), under upstream's names and
 * defaults, and what they start: the Prometheus client and, with notifications, the mailer.
 */
import type { Command } from 'commander';
import type { InactivityOptions } from '../controller/automation-state.ts';
import { Mailer, readSmtpSettings } from '../integrations/mail/mailer.ts';
import { PrometheusActivity } from '../integrations/prometheus/activity.ts';
import { parseDuration } from '../model/duration.ts';
import { DEFAULT_SSH_METRIC_NAME } from '../model/ssh-tracker-metric.ts';
import { wholeNumber } from './numeric-flags.ts';

export function addInactivityOptions(cmd: Command): Command {
  return cmd
    .option('--enable-instance-inactive-termination', 'stop (persistent) or delete idle Instances, and delete persistent ones left powered off (docs/behaviour.md §8.4)', false)
    .option('--enable-inactivity-notifications', 'warn the tenant by e-mail before each stop or deletion (needs --mail-config-dir)', false)
    .option('--instance-inactive-termination-max-number-of-alerts <n>', 'warnings before an idle Instance is stopped or deleted (a Template overrides it with the crownlabs.polito.it/custom-number-alerts annotation)', wholeNumber(0, 1000), 3)
    .option('--instance-inactive-termination-notification-interval <duration>', 'time between two inactivity warnings', '24h')
    .option('--inactive-destruction-notification-interval <duration>', 'time between two warnings before a powered-off Instance is deleted', '24h')
    .option('--instance-inactive-termination-status-check-timeout <duration>', 'timeout of each Prometheus request', '5s')
    .option('--margin-time <duration>', 'slack added to every timer, and allowed early on the notification interval', '1m')
    .option('--min-last-activity-requeue-time <duration>', 'a running Instance\'s activity is read again after a random time between min…', '1h')
    .option('--max-last-activity-requeue-time <duration>', '…and max, which is also how far back the activity queries look', '6h')
    .option('--last-activity-check-threshold <duration>', 'Prometheus is not asked again about an Instance within this time', '30s')
    .option('--monitoring-prometheus-url <url>', 'Prometheus base URL', 'http://monitoring-kube-prometheus-prometheus.monitoring:9090')
    .option('--monitoring-nginx-availability <query>', 'instant query: > 0 when the ingress controller\'s metrics are scraped', 'count(up{service="ingress-nginx-external-controller-metrics"})')
    .option('--monitoring-bastion-ssh-availability <query>', 'instant query: > 0 when the bastion\'s SSH tracker is scraped', 'count(up{container="bastion-operator"})')
    .option('--monitoring-web-ssh-availability <query>', 'instant query: > 0 when the web SSH metrics are scraped', 'count(up{container="webssh"})')
    .option('--monitoring-nginx-data <query>', 'range query of an Instance\'s browser requests (%s: namespace, then name)', 'nginx_ingress_controller_requests{exported_namespace="%s", exported_service=~"%s.*"}')
    .option('--monitoring-bastion-ssh-data <query>', 'range query of SSH connections to an IP (%q: the IP)', `${DEFAULT_SSH_METRIC_NAME}{destination_ip=%q}`)
    .option('--monitoring-web-ssh-data <query>', 'range query of web SSH connections to an IP (%q: the IP)', 'bastion_web_ssh_connections{destination_ip=%q}')
    .option('--prometheus-query-step <duration>', 'step of the activity range queries', '30s')
    .option('--mail-template-dir <dir>', 'mail templates, as the crownmail ConfigMap holds them (a missing file: the built-in wording)', '/etc/crownmail/templates')
    .option('--mail-config-dir <dir>', 'directory of smtp-config.yaml, as the crownmail Secret holds it', '/etc/crownmail/configs');
}

/** The inactivity options, undefined when it is off; throws a message naming the flag. */
export function inactivityFromFlags(opts: Record<string, unknown>): InactivityOptions | undefined {
  if (opts.enableInstanceInactiveTermination !== true) return undefined;
  const duration = (flag: string, key: string): number => {
    try {
      return parseDuration(String(opts[key]));
    } catch (e) {
      throw new Error(`${flag}: ${(e as Error).message}`);
    }
  };
  const flags = {
    maxAlerts: Number(opts.instanceInactiveTerminationMaxNumberOfAlerts),
    notifications: opts.enableInactivityNotifications === true,
    notificationIntervalMs: duration('--instance-inactive-termination-notification-interval', 'instanceInactiveTerminationNotificationInterval'),
    destructionNotificationIntervalMs: duration('--inactive-destruction-notification-interval', 'inactiveDestructionNotificationInterval'),
    marginMs: duration('--margin-time', 'marginTime'),
    minRequeueMs: duration('--min-last-activity-requeue-time', 'minLastActivityRequeueTime'),
    maxRequeueMs: duration('--max-last-activity-requeue-time', 'maxLastActivityRequeueTime'),
    checkThresholdMs: duration('--last-activity-check-threshold', 'lastActivityCheckThreshold'),
  };
  if (flags.maxRequeueMs < flags.minRequeueMs) throw new Error('--max-last-activity-requeue-time must not be below --min-last-activity-requeue-time');
  const url = String(opts.monitoringPrometheusUrl);
  if (!/^https?:\/\/[^/]/.test(url)) throw new Error(`--monitoring-prometheus-url must be an http(s) URL, not "${url}"`);
  const prometheus = new PrometheusActivity({
    url,
    available: [String(opts.monitoringNginxAvailability), String(opts.monitoringBastionSshAvailability), String(opts.monitoringWebSshAvailability)],
    nginxData: String(opts.monitoringNginxData),
    sshData: [String(opts.monitoringBastionSshData), String(opts.monitoringWebSshData)],
    stepMs: duration('--prometheus-query-step', 'prometheusQueryStep'),
    lookbackMs: flags.maxRequeueMs,
    timeoutMs: duration('--instance-inactive-termination-status-check-timeout', 'instanceInactiveTerminationStatusCheckTimeout'),
  });
  if (!flags.notifications) return { flags, prometheus };
  const mailer = new Mailer(readSmtpSettings(String(opts.mailConfigDir)), String(opts.mailTemplateDir));
  return { flags, prometheus, mailer };
}
