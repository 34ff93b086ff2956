// A third-party PodResources v1 client: @grpc/grpc-js with @grpc/proto-loader (from npm).
//   node node_client.js PROTO_FILE [SOCKET]   (default: $PODRESOURCES_SOCKET)
// Checks the pod-level semantics of the documentation's pod-scope-mixed pod (issue 4).
'use strict';
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const protoFile = process.argv[2];
const socket = process.argv[3] || process.env.PODRESOURCES_SOCKET;
const GI = 2 ** 30;

function fail(msg) {
  console.error(`node grpc-js client: FAIL: ${msg}`);
  process.exit(1);
}
function check(cond, msg) { if (!cond) fail(msg); }

const def = protoLoader.loadSync(protoFile, {keepCase: true, longs: Number, defaults: true});
const v1 = grpc.loadPackageDefinition(def).v1;
const client = new v1.PodResourcesLister(`unix://${socket}`, grpc.credentials.createInsecure());

function call(method, req) {
  return new Promise((resolve, reject) => {
    client[method](req, {deadline: Date.now() + 5000}, (err, resp) => (err ? reject(err) : resolve(resp)));
  });
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function checkPod(where, p, allocCpus) {
  const bubble = new Set(p.cpu_ids);
  check(p.cpu_ids.length === 4 && bubble.size === 4, `${where}: pod cpu_ids ${p.cpu_ids} is not a 4-CPU bubble`);
  for (const c of bubble) check(allocCpus.has(c), `${where}: pod CPU ${c} is not allocatable`);
  const mem = p.memory.filter((m) => m.memory_type === 'memory').reduce((s, m) => s + m.size, 0);
  check(mem === 4 * GI, `${where}: pod memory ${mem} != 4Gi`);
  const names = p.containers.map((c) => c.name);
  check(JSON.stringify(names) === JSON.stringify(['metrics-sidecar', 'logging-sidecar', 'main-app']),
        `${where}: containers ${names}`);
  const app = p.containers[2];
  const appCpus = new Set(app.cpu_ids);
  check(app.cpu_ids.length === 2 && appCpus.size === 2, `${where}: main-app cpu_ids ${app.cpu_ids}`);
  for (const c of appCpus) check(bubble.has(c), `${where}: main-app CPU ${c} outside the bubble`);
  for (const side of p.containers.slice(0, 2)) {
    check(side.cpu_ids.length === 0, `${where}: ${side.name} reports cpu_ids ${side.cpu_ids}`);
    check(side.memory.length === 0, `${where}: ${side.name} reports memory`);
  }
  const shared = [...bubble].filter((c) => !appCpus.has(c));
  check(shared.length === 2, `${where}: derived pod shared pool ${shared} is not 2 CPUs`);
}

(async () => {
  let pod = null;
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline && pod === null) {
    try {
      const resp = await call('List', {});
      const pods = resp.pod_resources.filter((p) => p.namespace === 'default' && p.name === 'pod-scope-mixed');
      if (pods.length > 0) {
        check(pods.length === 1, 'List reports pod-scope-mixed more than once');
        pod = pods[0];
        break;
      }
    } catch (e) {
      if (e.code !== grpc.status.FAILED_PRECONDITION && e.code !== grpc.status.UNAVAILABLE) {
        fail(`List: ${e.code} ${e.details}`);
      }
    }
    await sleep(100);
  }
  check(pod !== null, 'List never reported default/pod-scope-mixed');

  const alloc = await call('GetAllocatableResources', {});
  const allocCpus = new Set(alloc.cpu_ids);
  check(allocCpus.size > 0, 'GetAllocatableResources reports no CPUs');
  check(alloc.memory.length > 0, 'GetAllocatableResources reports no memory');

  const got = (await call('Get', {pod_name: 'pod-scope-mixed', pod_namespace: 'default'})).pod_resources;
  check(JSON.stringify(got) === JSON.stringify(pod), 'Get differs from List');
  checkPod('List', pod, allocCpus);
  checkPod('Get', got, allocCpus);

  try {
    await call('Get', {pod_name: 'no-such-pod', pod_namespace: 'default'});
    fail('Get of an unknown pod succeeded');
  } catch (e) {
    check(e.code === grpc.status.NOT_FOUND || e.code === grpc.status.UNKNOWN, `Get of an unknown pod: code ${e.code}`);
    check(/not found/.test(e.details), `Get of an unknown pod: ${e.details}`);
  }
  client.close();
  let version = '?';
  try { version = require('@grpc/grpc-js/package.json').version; } catch (e) { /* exports map */ }
  console.log(`node @grpc/grpc-js ${version} client: OK (pod ${pod.cpu_ids}, main-app ${pod.containers[2].cpu_ids})`);
})().catch((e) => fail(e.stack || String(e)));
