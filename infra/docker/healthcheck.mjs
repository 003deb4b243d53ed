// The image's HEALTHCHECK, for whichever service the container runs: healthy (exit 0) when it
// answers 200 on /healthz. Only one of the three listens in a container, so the first port that
// answers 200 decides; ROUTER_PORT, REGISTRY_PORT and RELAY_PORT are the services' own settings.
const ports = [
  process.env.ROUTER_PORT || '8081',
  process.env.REGISTRY_PORT || '8080',
  process.env.RELAY_PORT || '8082',
];

async function healthy(port) {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, {
      signal: AbortSignal.timeout(2000),
    });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

const results = await Promise.all(ports.map(healthy));
process.exit(results.some(Boolean) ? 0 : 1);
