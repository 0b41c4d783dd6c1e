/**
 * A minimal loopback load balancer for the PostgreSQL benchmark, in one of two modes:
 * - tcp (default): each client connection goes to the next upstream in turn and its bytes are piped
 *   both ways without being parsed, as HAProxy's `mode tcp` or an nginx `stream` block would; cheap
 *   enough that the upstreams, not the balancer, are what is measured;
 * - http: node:http with keep-alive agents, each request forwarded to the next upstream in turn
 *   (per-request round robin, body streamed both ways); it costs about as much CPU as the instance
 *   behind it (docs/BENCHMARKS.md), so it measures mostly itself on a small machine.
 * Usage: node bin/run-ts.js bench/round-robin-proxy.ts [--http] <port> <upstream origin> [<upstream origin>…]
 */
import { Agent, createServer, request } from 'node:http'
import { createServer as createTcpServer, connect } from 'node:net'

const args = process.argv.slice(2)
const http = args[0] === '--http'
if (http) args.shift()
const port = Number(args[0])
const upstreams = args.slice(1).map((u) => new URL(u))
if (!port || upstreams.length === 0) throw new Error('usage: round-robin-proxy.ts [--http] <port> <upstream> [<upstream>…]')
let next = 0
const ready = () => console.log(`listening on http://127.0.0.1:${port}`)

if (http) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  createServer((req, res) => {
    const upstream = upstreams[next++ % upstreams.length] as URL
    const forward = request(
      { agent, host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    forward.on('error', () => {
      if (!res.headersSent) res.writeHead(502)
      res.end()
    })
    req.pipe(forward)
  }).listen(port, '127.0.0.1', ready)
} else {
  createTcpServer({ noDelay: true }, (client) => {
    const upstream = upstreams[next++ % upstreams.length] as URL
    const server = connect({ host: upstream.hostname, port: Number(upstream.port), noDelay: true })
    client.pipe(server).pipe(client)
    const close = () => {
      client.destroy()
      server.destroy()
    }
    client.on('error', close)
    server.on('error', close)
    client.on('close', close)
    server.on('close', close)
  }).listen(port, '127.0.0.1', ready)
}
