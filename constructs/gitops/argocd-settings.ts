import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';

/**
 * Resource health checks (Lua, `resource.customizations.health.<group>_<kind>` of argocd-cm) for
 * what the gitops tree deploys, mapping each status the way the controller maps it to an Instance
 * phase (src/model/phase.ts). Argo CD runs them with `obj` bound to the live object.
 */
export const ARGOCD_HEALTH_CHECKS: Readonly<Record<string, string>> = {
  // The Instance phase (written by the controller) as Argo CD health. A stopped Instance
  // (spec.running: false) is Healthy: its desired state, as a Deployment scaled to 0 is.
  'crownlabs.polito.it_Instance': `local hs = { status = "Progressing", message = "Waiting for the controller" }
local running = obj.spec == nil or obj.spec.running ~= false
local phase = ""
if obj.status ~= nil and obj.status.phase ~= nil then phase = obj.status.phase end
if phase == "Ready" then
  hs.status = "Healthy"
  hs.message = "Ready"
  if obj.status.url ~= nil and obj.status.url ~= "" then hs.message = "Ready at " .. obj.status.url end
elseif phase == "Off" then
  if running then
    hs.message = "Off, starting"
  else
    hs.status = "Healthy"
    hs.message = "Off (spec.running is false)"
  end
elseif phase == "Failed" or phase == "CreationLoopBackoff" or phase == "ResourceQuotaExceeded" then
  hs.status = "Degraded"
  hs.message = phase
elseif phase ~= "" then
  hs.message = phase
end
return hs
`,
  // KubeVirt's printableStatus and ready (SPEC's VM phase table). Unlike Argo CD's built-in check,
  // a VM stopped on purpose (spec.running: false / runStrategy Halted) is Healthy, not Suspended.
  'kubevirt.io_VirtualMachine': `local hs = { status = "Progressing", message = "Waiting for KubeVirt" }
local stopped = obj.spec ~= nil and (obj.spec.running == false or obj.spec.runStrategy == "Halted")
if obj.status == nil then return hs end
for _, c in ipairs(obj.status.conditions or {}) do
  if c.type == "Paused" and c.status == "True" then
    hs.status = "Suspended"
    hs.message = "Paused"
    return hs
  end
  if c.type == "Failure" and c.status == "True" then
    hs.status = "Degraded"
    hs.message = c.message or c.reason or "Failure"
    return hs
  end
end
local ps = obj.status.printableStatus or ""
if ps == "Running" then
  if obj.status.ready == true then
    hs.status = "Healthy"
    hs.message = "Running"
  else
    hs.message = "Running, not ready yet"
  end
elseif ps == "Stopped" then
  if stopped then
    hs.status = "Healthy"
    hs.message = "Stopped (spec.running is false)"
  else
    hs.message = "Stopped, starting"
  end
elseif ps == "CrashLoopBackOff" or ps == "ErrorUnschedulable" or ps == "ErrImagePull" or ps == "ImagePullBackOff" or ps == "ErrorPvcNotFound" or ps == "ErrorDataVolumeNotFound" or ps == "DataVolumeError" then
  hs.status = "Degraded"
  hs.message = ps
elseif ps == "Unknown" then
  hs.status = "Unknown"
  hs.message = ps
elseif ps ~= "" then
  hs.message = ps
end
return hs
`,
  // An ephemeral VM. Unlike the built-in check, Ready=False while the guest boots (a readiness
  // probe that has not passed yet) is Progressing, not Degraded; a VMI that ended is Degraded (the
  // Instance is Failed), and so is one whose launcher pod was refused (e.g. exceeded quota).
  // (An object being deleted is Progressing before any script runs.) Argo CD runs these scripts
  // without Lua's string library: no pattern matching.
  'kubevirt.io_VirtualMachineInstance': `local hs = { status = "Progressing", message = "Waiting for KubeVirt" }
if obj.status == nil then return hs end
local ready = false
for _, c in ipairs(obj.status.conditions or {}) do
  if c.type == "Paused" and c.status == "True" then
    hs.status = "Suspended"
    hs.message = "Paused"
    return hs
  end
  if c.type == "Synchronized" and c.status == "False" and c.reason == "FailedCreate" then
    hs.status = "Degraded"
    hs.message = "FailedCreate: " .. (c.message or "")
    return hs
  end
  if c.type == "Ready" and c.status == "True" then ready = true end
end
local phase = obj.status.phase or ""
if phase == "Running" then
  if ready then
    hs.status = "Healthy"
    hs.message = "Running"
  else
    hs.message = "Running, not ready yet"
  end
elseif phase == "Failed" or phase == "Succeeded" then
  hs.status = "Degraded"
  hs.message = "VMI " .. phase
elseif phase == "Unknown" then
  hs.status = "Unknown"
  hs.message = phase
elseif phase ~= "" then
  hs.message = phase
end
return hs
`,
  // CDI's import of a persistent VM's disk (a DataVolume of the VM's dataVolumeTemplates).
  'cdi.kubevirt.io_DataVolume': `local hs = { status = "Progressing", message = "Waiting for CDI" }
if obj.status == nil then return hs end
for _, c in ipairs(obj.status.conditions or {}) do
  if c.type == "Running" and c.status == "False" and c.reason == "Error" then
    hs.status = "Degraded"
    hs.message = c.message or "Error"
    return hs
  end
end
local phase = obj.status.phase or ""
if phase == "Succeeded" then
  hs.status = "Healthy"
  hs.message = phase
elseif phase == "WaitForFirstConsumer" then
  hs.status = "Healthy"
  hs.message = "WaitForFirstConsumer: bound when its VM starts"
elseif phase == "Failed" or phase == "Unknown" then
  hs.status = "Degraded"
  hs.message = phase
elseif phase == "Paused" then
  hs.status = "Suspended"
  hs.message = phase
elseif phase ~= "" then
  hs.message = phase
end
return hs
`,
  // The gitops tree orders its Applications by sync wave (workspaces, tenants, instances): an
  // instance Application needs its tenant's namespace. Argo CD >= 1.8 assesses no health for
  // Applications, so the root would create every wave at once. This check makes a child
  // Application Healthy once it is Synced (its objects exist) — not when its workloads run, so a
  // Pending PVC or a booting VM does not hold back the other tenants — and Degraded when its sync
  // failed for good or its manifests cannot be generated.
  'argoproj.io_Application': `local hs = { status = "Progressing", message = "Waiting for the first sync" }
if obj.status == nil then return hs end
for _, c in ipairs(obj.status.conditions or {}) do
  if c.type == "ComparisonError" or c.type == "InvalidSpecError" then
    hs.status = "Degraded"
    hs.message = c.message
    return hs
  end
end
if obj.status.sync ~= nil and obj.status.sync.status == "Synced" then
  hs.status = "Healthy"
  hs.message = "Synced"
  return hs
end
local op = obj.status.operationState
if op ~= nil and (op.phase == "Failed" or op.phase == "Error") then
  hs.status = "Degraded"
  hs.message = op.message
elseif op ~= nil and op.message ~= nil then
  hs.message = op.message
end
return hs
`,
  // Gateway API routes (docs/behaviour.md §17): Healthy once every parent Gateway accepted the
  // route and resolved its backends for its current generation, Degraded when one refused either.
  // Without a status a route serves nothing yet: Progressing, so a PruneLast sync keeps the
  // Ingress it replaces until then (some Argo CD releases call a route without status Healthy).
  'gateway.networking.k8s.io_HTTPRoute': `local hs = { status = "Progressing", message = "Waiting for the Gateway to accept the route" }
if obj.status == nil or obj.status.parents == nil or #obj.status.parents == 0 then return hs end
local generation = obj.metadata.generation
for _, p in ipairs(obj.status.parents) do
  local name = ""
  if p.parentRef ~= nil and p.parentRef.name ~= nil then name = p.parentRef.name end
  local found = {}
  for _, c in ipairs(p.conditions or {}) do
    if generation == nil or c.observedGeneration == nil or c.observedGeneration == generation then found[c.type] = c end
  end
  for _, t in ipairs({ "Accepted", "ResolvedRefs" }) do
    local c = found[t]
    if c ~= nil and c.status == "False" then
      hs.status = "Degraded"
      hs.message = "Gateway " .. name .. ": " .. t .. " is False: " .. (c.message or c.reason or "")
      return hs
    end
    if c == nil or c.status ~= "True" then
      hs.message = "Gateway " .. name .. ": waiting for " .. t
      return hs
    end
  end
end
hs.status = "Healthy"
hs.message = "Accepted"
return hs
`,
};

/**
 * How Argo CD recognizes the objects of an Application. Annotation (`argocd.argoproj.io/tracking-id`,
 * Argo CD 3's default): label tracking would overwrite `app.kubernetes.io/instance`, which rendered
 * objects carry with their own values (e.g. the per-instance oauth2-proxy).
 */
export const ARGOCD_TRACKING_METHOD = 'annotation';

export interface ArgoCdSettingsProps {
  readonly argocdNamespace: string;
}

/**
 * The keys of `argocd-cm` the gitops tree relies on. Server-side applied under its own field
 * manager, they merge into the argocd-cm of an existing install and leave its other keys alone.
 */
export class ArgoCdSettings extends Construct {
  constructor(scope: Construct, id: string, props: ArgoCdSettingsProps) {
    super(scope, id);
    const data: Record<string, string> = { 'application.resourceTrackingMethod': ARGOCD_TRACKING_METHOD };
    for (const [groupKind, lua] of Object.entries(ARGOCD_HEALTH_CHECKS)) data[`resource.customizations.health.${groupKind}`] = lua;
    new k8s.KubeConfigMap(this, 'argocd-cm', {
      // Argo CD reads only ConfigMaps labelled part-of: argocd.
      metadata: { name: 'argocd-cm', namespace: props.argocdNamespace, labels: { 'app.kubernetes.io/part-of': 'argocd' } },
      data,
    });
  }
}
