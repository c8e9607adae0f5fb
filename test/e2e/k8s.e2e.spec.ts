/**
 * The Kubernetes manifests, checked offline as CI checks them: `kubectl kustomize` renders each overlay, every rendered
 * object validates against the Kubernetes schemas (kubernetes-models), and the policy check
 * (support/manifest-policy.ts) finds nothing: pinned images, probes, limits, no root. The policy check itself is shown
 * to catch each rule on a doctored object. kubectl is required (`.ci/run` installs it where it can): without it this
 * fails, saying so, rather than skipping.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ROOT } from './support/processes.js';
import { imageProblem, podSpecOf, policyViolations, type Fields, type K8sObject } from './support/manifest-policy.js';

const OVERLAYS = ['dev', 'prod'] as const;

/** The Deployments the base declares: one per service, and policy's read-models role apart (decision 0021). */
const DEPLOYMENTS = [
  'approvals',
  'audit',
  'device-bridge',
  'mcp-gateway',
  'model-loop',
  'policy',
  'policy-read-models',
];

/** The Secrets the base references by name, with the keys it reads from each. */
const SECRETS: Record<string, readonly string[]> = {
  'ormuz-nats-users': [
    'NATS_POLICY_PASSWORD',
    'NATS_APPROVALS_PASSWORD',
    'NATS_DEVICE_BRIDGE_PASSWORD',
    'NATS_MODEL_LOOP_PASSWORD',
    'NATS_AUDIT_PASSWORD',
    'NATS_MCP_GATEWAY_PASSWORD',
    'NATS_CLI_PASSWORD',
  ],
  'ormuz-database': ['DATABASE_URL'],
  'ormuz-oidc': ['ORMUZ_AUTH_ISSUER', 'ORMUZ_AUTH_JWKS_URL', 'ORMUZ_AUTH_AUDIENCE', 'ORMUZ_CONSOLE_OIDC_CLIENT_ID'],
  'ormuz-webhooks': ['ORMUZ_WEBHOOKS_SECRET_KEY'],
  'ormuz-model-providers': ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY'],
};

function render(overlay: string): K8sObject[] {
  let out: string;
  try {
    out = execFileSync('kubectl', ['kustomize', join(ROOT, 'infra', 'k8s', 'overlays', overlay)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        'kubectl is not on PATH: the Kubernetes manifests are rendered with `kubectl kustomize`. Install kubectl ' +
          '(https://kubernetes.io/docs/tasks/tools/; .ci/run installs it with apt where a repository has it).',
        { cause: err },
      );
    }
    throw new Error(`kubectl kustomize infra/k8s/overlays/${overlay} failed: ${(err as { stderr?: string }).stderr}`, {
      cause: err,
    });
  }
  return parseAllDocuments(out).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`unparseable YAML from kubectl: ${doc.errors[0]!.message}`);
    return doc.toJS() as K8sObject;
  });
}

/**
 * kustomize breaks a Secret's base64 values into lines of 70 characters, which the API server's decoder (Go's
 * encoding/json, which skips line breaks in base64) reads as one value; the schema's `byte` format does not, so the
 * breaks are taken out before validation, and nothing else is changed.
 */
function asTheApiServerReadsIt(object: K8sObject): K8sObject {
  if (object.kind !== 'Secret' || typeof object.data !== 'object' || object.data === null) return object;
  const data = Object.fromEntries(
    Object.entries(object.data as Record<string, string>).map(([k, v]) => [k, v.replace(/[\r\n]/g, '')]),
  );
  return { ...object, data };
}

/** Validates `object` with the kubernetes-models class of its apiVersion and kind; throws with the schema's words. */
async function validate(object: K8sObject): Promise<void> {
  const path = `kubernetes-models/${object.apiVersion}/${object.kind}`;
  const models = (await import(path).catch((err: unknown) => {
    throw new Error(`no Kubernetes schema for ${object.apiVersion} ${object.kind} (${path})`, { cause: err });
  })) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = models[object.kind];
  if (!Model) throw new Error(`${path} exports no ${object.kind}`);
  new Model(asTheApiServerReadsIt(object)).validate();
}

const named = (objects: readonly K8sObject[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name} in the rendering`);
  return found;
};
const containerOf = (object: K8sObject) => podSpecOf(object)!.containers[0] as Fields;

describe.each(OVERLAYS)('infra/k8s/overlays/%s', (overlay) => {
  let objects: K8sObject[];

  beforeAll(() => {
    objects = render(overlay);
  });

  it('renders a Deployment per service, the NATS StatefulSet, the migration Job, HPAs, PDBs and NetworkPolicies', () => {
    const names = (kind: string) =>
      objects
        .filter((o) => o.kind === kind)
        .map((o) => o.metadata.name)
        .sort();
    expect(names('Deployment')).toEqual(DEPLOYMENTS);
    expect(names('StatefulSet')).toEqual(['nats']);
    expect(names('Job')).toEqual(['ormuz-migrate']);
    expect(names('HorizontalPodAutoscaler')).toEqual(['approvals', 'policy']);
    expect(names('PodDisruptionBudget')).toEqual([...DEPLOYMENTS, 'nats'].sort());
    expect(names('NetworkPolicy')).toEqual(expect.arrayContaining(['default-deny', 'metrics-scrape']));
    const namespace = overlay === 'prod' ? 'ormuz' : 'ormuz-dev';
    expect(names('Namespace')).toEqual([namespace]);
    for (const o of objects.filter((x) => x.kind !== 'Namespace')) expect(o.metadata.namespace).toBe(namespace);
  });

  it('validates every object against the Kubernetes schemas', async () => {
    const failures: string[] = [];
    for (const object of objects) {
      await validate(object).catch((err: unknown) =>
        failures.push(`${object.kind}/${object.metadata.name}: ${(err as Error).message}`),
      );
    }
    expect(failures).toEqual([]);
  });

  it('passes the policy check: pinned images, probes, limits, never root', () => {
    expect(policyViolations(objects)).toEqual([]);
  });

  it('probes every service on HEALTH_PORT: /livez for liveness, /readyz for readiness, /metrics for Prometheus', () => {
    const config = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('ormuz-config-'));
    const data = config?.data as Record<string, string>;
    expect(data).toMatchObject({ HEALTH_PORT: '9090', HEALTH_HOST: '0.0.0.0' });
    for (const name of DEPLOYMENTS) {
      const c = containerOf(named(objects, 'Deployment', name));
      expect(c.ports).toContainEqual({ name: 'health', containerPort: Number(data.HEALTH_PORT) });
      expect(c.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'health' });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
      expect(named(objects, 'Deployment', name).spec!.template.metadata.annotations).toEqual({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': data.HEALTH_PORT,
        'prometheus.io/path': '/metrics',
      });
      expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(podSpecOf(named(objects, 'Deployment', name))!.securityContext.seccompProfile).toEqual({
        type: 'RuntimeDefault',
      });
    }
  });

  it('runs two replicas of the services whose log consumers follow a lease, rolled one at a time', () => {
    // Decision 0033: a standby takes the consumers over, so neither a rollout nor a drain leaves none running.
    for (const name of ['audit', 'model-loop', 'policy-read-models']) {
      const deployment = named(objects, 'Deployment', name);
      expect(deployment.spec).toMatchObject({ replicas: 2, strategy: { rollingUpdate: { maxUnavailable: 0 } } });
      expect(named(objects, 'PodDisruptionBudget', name).spec).toMatchObject({ minAvailable: 1 });
    }
  });

  it('runs NATS >= 2.11 as three JetStream servers that sync every write and hold every stream, under the shipped authorization', () => {
    const nats = named(objects, 'StatefulSet', 'nats');
    expect(nats.spec!.replicas).toBe(3);
    const [, major, minor] = /^nats:(\d+)\.(\d+)\.\d+/.exec(containerOf(nats).image as string) ?? [];
    expect(Number(major) * 100 + Number(minor)).toBeGreaterThanOrEqual(211);
    const config = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('nats-config-'));
    expect((config?.data as Record<string, string>)['nats.conf']).toMatch(/^\s*sync_interval: always$/m);
    // The services declare every stream on all of the servers.
    const settings = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('ormuz-config-'));
    expect((settings?.data as Record<string, string>).ORMUZ_STREAM_REPLICAS).toBe(String(nats.spec!.replicas));
    const authorization = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('nats-authorization-'),
    );
    expect((authorization?.data as Record<string, string>)['authorization.conf']).toBe(
      readFileSync(join(ROOT, 'infra', 'nats', 'authorization.conf'), 'utf8'),
    );
  });

  it('gives every service its own NATS user and the password of that user', () => {
    for (const name of DEPLOYMENTS) {
      const env = containerOf(named(objects, 'Deployment', name)).env as {
        name: string;
        value?: string;
        valueFrom?: Fields;
      }[];
      const user = env.find((e) => e.name === 'NATS_USER')?.value;
      expect(user).toBe(name.replace(/-read-models$/, ''));
      expect(env.find((e) => e.name === 'NATS_PASSWORD')?.valueFrom?.secretKeyRef.key).toBe(
        `NATS_${user!.toUpperCase().replace(/-/g, '_')}_PASSWORD`,
      );
    }
  });

  it(
    overlay === 'dev'
      ? 'generates placeholder Secrets with every key the base reads'
      : 'holds no Secret: it references those made in the cluster',
    () => {
      const secrets = objects.filter((o) => o.kind === 'Secret');
      if (overlay === 'prod') {
        expect(secrets).toEqual([]);
        return;
      }
      for (const [prefix, keys] of Object.entries(SECRETS)) {
        const secret = secrets.find((s) => s.metadata.name.startsWith(`${prefix}-`));
        expect(Object.keys((secret?.data ?? {}) as object).sort()).toEqual([...keys].sort());
      }
    },
  );
});

describe('the manifests policy check', () => {
  let deployment: K8sObject;
  const doctored = (change: (pod: Fields, container: Fields) => void): K8sObject => {
    const copy = structuredClone(deployment);
    const pod = podSpecOf(copy)!;
    change(pod, pod.containers[0]);
    return copy;
  };
  const where = 'Deployment/policy container policy';

  beforeAll(() => {
    deployment = named(render('prod'), 'Deployment', 'policy');
    expect(policyViolations([deployment])).toEqual([]);
  });

  it('leaves the schemas to the schema check, which refuses a malformed object with its reason', async () => {
    const malformed = doctored((pod) => (pod.containers[0].ports = [{ name: 'health', containerPort: 'nine' }]));
    await expect(validate(malformed)).rejects.toThrow('containerPort must be integer');
    await expect(validate({ ...deployment, kind: 'Deploymint' })).rejects.toThrow(
      'no Kubernetes schema for apps/v1 Deploymint',
    );
  });

  it('refuses :latest and untagged images, and accepts a tag or a digest', () => {
    expect(policyViolations([doctored((_, c) => (c.image = 'registry.example.com/ormuz:latest'))])).toEqual([
      `${where} runs registry.example.com/ormuz:latest: :latest moves (pin a release tag, or a digest)`,
    ]);
    expect(policyViolations([doctored((_, c) => (c.image = 'registry.example.com:5000/ormuz'))])).toEqual([
      `${where} runs registry.example.com:5000/ormuz, which has no tag (pin one, or a digest)`,
    ]);
    expect(imageProblem(`ormuz@sha256:${'a'.repeat(64)}`)).toBeUndefined();
    expect(imageProblem('registry.example.com:5000/ormuz:0.1.0')).toBeUndefined();
  });

  it('refuses a long-running container without a liveness or a readiness probe', () => {
    expect(policyViolations([doctored((_, c) => delete c.livenessProbe)])).toEqual([`${where} has no livenessProbe`]);
    expect(policyViolations([doctored((_, c) => delete c.readinessProbe)])).toEqual([`${where} has no readinessProbe`]);
  });

  it('refuses a container without CPU or memory limits', () => {
    expect(policyViolations([doctored((_, c) => delete c.resources.limits)])).toEqual([
      `${where} has no cpu limit`,
      `${where} has no memory limit`,
    ]);
  });

  it('refuses a container that may run as root', () => {
    expect(
      policyViolations([
        doctored((pod, c) => {
          delete pod.securityContext.runAsNonRoot;
          delete c.securityContext.runAsNonRoot;
        }),
      ]),
    ).toEqual([`${where} may run as root (runAsNonRoot is not true)`]);
    expect(policyViolations([doctored((_, c) => (c.securityContext.runAsUser = 0))])).toContain(
      `${where} runs as root (runAsUser 0)`,
    );
    expect(policyViolations([doctored((_, c) => delete c.securityContext.allowPrivilegeEscalation)])).toEqual([
      `${where} may gain root (allowPrivilegeEscalation is not false)`,
    ]);
    expect(policyViolations([doctored((_, c) => (c.securityContext.privileged = true))])).toEqual([
      `${where} is privileged`,
    ]);
  });

  it('holds an init container to every rule but the probes', () => {
    const withInit = doctored(
      (pod) => (pod.initContainers = [{ ...pod.containers[0], name: 'init', livenessProbe: undefined }]),
    );
    expect(policyViolations([withInit])).toEqual([]);
    const bad = doctored((pod) => (pod.initContainers = [{ name: 'init', image: 'busybox' }]));
    expect(policyViolations([bad])).toEqual([
      'Deployment/policy container init runs busybox, which has no tag (pin one, or a digest)',
      'Deployment/policy container init has no cpu limit',
      'Deployment/policy container init has no memory limit',
      'Deployment/policy container init may gain root (allowPrivilegeEscalation is not false)',
    ]);
  });
});
