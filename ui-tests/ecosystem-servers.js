/**
 * Starts the servers of the `notebook7` and `gateway` projects all at once: Playwright starts its
 * webServers one after the other, and these four would add their start-up times to the suite's. The
 * process reports "starting" at once (playwright.config.js waits for that line only); the specs wait for
 * their own server (`waitForServer`). Outside CI a server that already answers is used as it is.
 * Playwright ends this process group, children included, when the tests end.
 */
const { spawn } = require('child_process');
const path = require('path');
const E = require('./ecosystem');

const pythonPath = [__dirname, process.env.PYTHONPATH]
  .filter(Boolean)
  .join(path.delimiter);

const SERVERS = [
  {
    name: 'notebook7',
    command: `jupyter notebook --config jupyter_server_test_config.py --port ${E.NOTEBOOK7_PORT} --ServerApp.port_retries=0`,
    url: E.NOTEBOOK7_READY_URL
  },
  {
    // Its kernels start in their notebook's folder (gateway_kernels.py): the data files are found there.
    name: 'kernel-gateway',
    command: `jupyter kernelgateway --KernelGatewayApp.ip=127.0.0.1 --KernelGatewayApp.port=${E.KERNEL_GATEWAY_PORT} --KernelGatewayApp.port_retries=0 --JupyterWebsocketPersonality.list_kernels=True --SeedingMappingKernelManager.kernel_manager_class=gateway_kernels.WorkingDirKernelManager`,
    url: `${E.KERNEL_GATEWAY_URL}/api`,
    env: { PYTHONPATH: pythonPath }
  },
  {
    name: 'slow-gateway',
    command: `python slow_gateway.py ${E.SLOW_GATEWAY_PORT} ${E.KERNEL_GATEWAY_URL} ${E.GATEWAY_DELAY_S} ${E.GATEWAY_LATENCY_S}`,
    url: `http://127.0.0.1:${E.SLOW_GATEWAY_PORT}/api`
  },
  {
    // Every gateway request waits for the slow proxy; the timeouts leave room for a gateway that takes
    // far longer (Enterprise Gateway launching a kernel in a cluster). The server extension proxies the kernel
    // websockets with the package's class, which leaves no stale websocket on the gateway (docs/gateways.md).
    name: 'gateway-lab',
    command: `jupyter lab --config jupyter_server_test_config.py --port ${E.GATEWAY_LAB_PORT} --ServerApp.port_retries=0 --gateway-url=http://127.0.0.1:${E.SLOW_GATEWAY_PORT} --GatewayClient.request_timeout=120 --GatewayClient.connect_timeout=120`,
    url: E.GATEWAY_LAB_READY_URL
  }
];

async function answers(url) {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

function prefixed(name, stream, out) {
  let rest = '';
  stream.on('data', chunk => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop();
    for (const line of lines) {
      out.write(`[${name}] ${line}\n`);
    }
  });
}

async function main() {
  console.log('ecosystem servers starting');
  for (const server of SERVERS) {
    if (!process.env.CI && (await answers(server.url))) {
      console.log(`[${server.name}] already running at ${server.url}`);
      continue;
    }
    const child = spawn(server.command, {
      shell: true,
      cwd: __dirname,
      env: { ...process.env, ...server.env },
      stdio: ['ignore', 'pipe', 'pipe']
    });
    prefixed(server.name, child.stdout, process.stdout);
    prefixed(server.name, child.stderr, process.stderr);
    child.on('exit', code =>
      console.log(`[${server.name}] exited with status ${code}`)
    );
  }
}

void main();
