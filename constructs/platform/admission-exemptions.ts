/** CEL list literal of strings. */
export function celList(xs: readonly string[]): string {
  return `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
}

/**
 * The match conditions that leave the controller's own requests and those of the bypass groups
 * (cluster administrators, a backup restore) unchecked, shared by the install's Instance policies.
 */
export function exemptionMatchConditions(writers: readonly string[], bypassGroups: readonly string[] = ['system:masters']): { name: string; expression: string }[] {
  return [
    { name: 'not-the-controller', expression: `!(request.userInfo.username in ${celList(writers)})` },
    { name: 'not-a-bypass-group', expression: `!(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ${celList(bypassGroups)}))` },
  ];
}
