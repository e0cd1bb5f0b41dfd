// Validates every manifest in k8s/ against the Kubernetes schemas of the kubernetes-models package (types, required
// fields, formats), then what the schemas cannot see: the Deployment, Service and PodDisruptionBudget select the
// same pods, and every ConfigMap and Secret the pods read is among the manifests. Exit status 1 on any problem.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..');
const problems = [];
const docs = [];
for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
  for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
    if (doc.errors.length) {
      problems.push(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      continue;
    }
    const manifest = doc.toJS();
    if (manifest) docs.push({ file, manifest });
  }
}

for (const { file, manifest } of docs) {
  const { apiVersion, kind } = manifest;
  const where = `${file} (${kind} ${manifest.metadata?.name})`;
  // core/v1 lives at kubernetes-models/v1, apps/v1 at kubernetes-models/apps/v1, and so on
  let Model;
  try {
    Model = (await import(`kubernetes-models/${apiVersion}`))[kind];
  } catch (e) {
    problems.push(`${where}: no schema for ${apiVersion} (${e.message})`);
    continue;
  }
  if (!Model) {
    problems.push(`${where}: no kind ${kind} in ${apiVersion}`);
    continue;
  }
  try {
    new Model(manifest).validate();
  } catch (e) {
    problems.push(`${where}: ${e.message}`);
  }
  if (!manifest.metadata?.name) problems.push(`${where}: no metadata.name`);
}

const of = (kind) => docs.filter((d) => d.manifest.kind === kind).map((d) => d.manifest);
const matches = (selector, labels) => Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v);
for (const deployment of of('Deployment')) {
  const labels = deployment.spec.template.metadata?.labels;
  if (!matches(deployment.spec.selector.matchLabels, labels)) {
    problems.push(`Deployment ${deployment.metadata.name}: its selector does not match its pods' labels`);
  }
  for (const service of of('Service')) {
    if (!matches(service.spec.selector, labels)) problems.push(`Service ${service.metadata.name} selects no pod of ${deployment.metadata.name}`);
  }
  for (const pdb of of('PodDisruptionBudget')) {
    if (!matches(pdb.spec.selector.matchLabels, labels)) problems.push(`PodDisruptionBudget ${pdb.metadata.name} selects no pod of ${deployment.metadata.name}`);
  }
  for (const container of deployment.spec.template.spec.containers) {
    for (const from of container.envFrom ?? []) {
      const ref = from.configMapRef ? ['ConfigMap', from.configMapRef.name] : ['Secret', from.secretRef.name];
      if (!of(ref[0]).some((m) => m.metadata.name === ref[1])) {
        problems.push(`Deployment ${deployment.metadata.name}: reads ${ref[0]} ${ref[1]}, which no manifest defines`);
      }
    }
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      if (!container[probe]) problems.push(`Deployment ${deployment.metadata.name}: container ${container.name} has no ${probe}`);
    }
  }
}

if (problems.length) {
  problems.forEach((p) => console.error(`k8s: ${p}`));
  process.exit(1);
}
console.log(`k8s: ${docs.length} manifests valid (${docs.map((d) => d.manifest.kind).join(', ')})`);
