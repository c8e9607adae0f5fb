/**
 * The rules every rendered Kubernetes workload of Ormuz must keep, beyond what the Kubernetes schemas check: each
 * container's image is pinned (a tag other than `latest`, or a digest), a long-running container (Deployment,
 * StatefulSet, DaemonSet) has liveness and readiness probes, every container has CPU and memory limits, and none can
 * run as root (runAsNonRoot, no uid 0, no privilege escalation, not privileged). Init containers and a Job's
 * containers run to completion, so they need no probes; every other rule holds for them too.
 */

/** Fields of a parsed manifest, read loosely: the schema check (kubernetes-models) is what holds their types. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Fields = Record<string, any>;

/** A rendered Kubernetes object, as parsed from YAML. */
export interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec?: Fields;
  readonly [key: string]: unknown;
}

const LONG_RUNNING = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet']);

/** The pod spec an object runs, if it runs pods. */
export function podSpecOf(object: K8sObject): Fields | undefined {
  switch (object.kind) {
    case 'Pod':
      return object.spec;
    case 'Deployment':
    case 'StatefulSet':
    case 'DaemonSet':
    case 'ReplicaSet':
    case 'Job':
      return object.spec?.template?.spec;
    case 'CronJob':
      return object.spec?.jobTemplate?.spec?.template?.spec;
    default:
      return undefined;
  }
}

/** `image` names a fixed build: `name:tag` with a tag other than `latest`, or `name@sha256:…`. */
export function imageProblem(image: unknown): string | undefined {
  if (typeof image !== 'string' || image === '') return 'has no image';
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return undefined;
  const lastPart = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastPart.indexOf(':');
  if (colon < 0) return `runs ${image}, which has no tag (pin one, or a digest)`;
  if (lastPart.slice(colon + 1) === 'latest') return `runs ${image}: :latest moves (pin a release tag, or a digest)`;
  return undefined;
}

/** Every rule each container of `objects` breaks, one sentence each naming the object and the container. */
export function policyViolations(objects: readonly K8sObject[]): string[] {
  const violations: string[] = [];
  for (const object of objects) {
    const pod = podSpecOf(object);
    if (!pod) continue;
    const podSecurity = (pod.securityContext ?? {}) as Fields;
    const groups: [Fields[], boolean][] = [
      [pod.initContainers ?? [], false],
      [pod.containers ?? [], LONG_RUNNING.has(object.kind)],
    ];
    for (const [containers, needsProbes] of groups) {
      for (const c of containers) {
        const where = `${object.kind}/${object.metadata.name} container ${c.name}`;
        const image = imageProblem(c.image);
        if (image) violations.push(`${where} ${image}`);
        if (needsProbes && !c.livenessProbe) violations.push(`${where} has no livenessProbe`);
        if (needsProbes && !c.readinessProbe) violations.push(`${where} has no readinessProbe`);
        for (const resource of ['cpu', 'memory']) {
          if (c.resources?.limits?.[resource] === undefined) violations.push(`${where} has no ${resource} limit`);
        }
        const security = (c.securityContext ?? {}) as Fields;
        const runAsNonRoot = security.runAsNonRoot ?? podSecurity.runAsNonRoot;
        const runAsUser = security.runAsUser ?? podSecurity.runAsUser;
        if (runAsNonRoot !== true) violations.push(`${where} may run as root (runAsNonRoot is not true)`);
        if (runAsUser === 0) violations.push(`${where} runs as root (runAsUser 0)`);
        if (security.allowPrivilegeEscalation !== false) {
          violations.push(`${where} may gain root (allowPrivilegeEscalation is not false)`);
        }
        if (security.privileged === true) violations.push(`${where} is privileged`);
      }
    }
  }
  return violations;
}
