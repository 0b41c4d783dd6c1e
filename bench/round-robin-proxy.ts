/**
 * A minimal loopback load balancer for the PostgreSQL benchmark: node:http, keep-alive agents,
 * each request forwarded to the next upstream in turn (round robin), body streamed both ways.
 * Usage: node bin/run-ts.js bench/round-robin-proxy.ts <port> <upstream origin> [<upstream origin>…]
 */
import { Agent, createServer, request } from 'node:http'

const port = Number(process.argv[2])
const upstreams = process.argv.slice(3).map((u) => new URL(u))
if (!port || upstreams.length === 0) throw new Error('usage: round-robin-proxy.ts <port> <upstream> [<upstream>…]')
const agent = new Agent({ keepAlive: true, maxSockets: 64 })
let next = 0

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
}).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`))
