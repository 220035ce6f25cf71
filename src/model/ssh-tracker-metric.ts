/** The SSH tracker's counter name (docs/behaviour.md §15.4): the tracker's default and the bastion Deployment's flag share it. */
export const DEFAULT_SSH_METRIC_NAME = 'bastion_ssh_connections';
