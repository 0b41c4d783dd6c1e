/**
 * The proxy configuration, written once. NGINX_TEMPLATE and CADDY_TEMPLATE are the text of the
 * nginx and Caddy blocks in docs/FORWARD-AUTH.md and of the files docs/forward-auth/nginx-server.conf
 * and docs/forward-auth/Caddyfile, placeholders included (tests/features/forward-auth/forward-auth-proxies.test.ts
 * fails when the four differ, and runs the Markdown's blocks on the real proxies). The panel's
 * "Protected apps" view fills them for each rule's domain with this Gatehouse's URLs.
 *
 * Placeholders: LISTEN (nginx's listen parameters: `443 ssl`), SERVER_NAME / SITE_ADDRESS (the
 * app's host name), GATEHOUSE_API (how nginx reaches Gatehouse's API: origin + basePath),
 * GATEHOUSE_UPSTREAM and BASE_PATH (Caddy: host:port of Gatehouse, and its basePath), APP_UPSTREAM
 * (the protected app).
 */
export const NGINX_TEMPLATE = `# Refuses every request whose Host names none of the server blocks on this port (and a request
# without Host): without it, the first block would answer them, and a client could pick a
# forward-auth rule by sending another Host. Keep exactly one default_server per port.
server {
  listen LISTEN default_server;
  server_name _;
  return 444;
}

server {
  listen LISTEN;
  server_name SERVER_NAME;

  # The subrequest: Gatehouse answers 200 (with Remote-* unless bypass), 401 (with Location: the
  # sign-in page, returnTo encoded) or 403. Only the original URL, method and cookies go.
  location = /_gatehouse {
    internal;
    proxy_pass GATEHOUSE_API/forward-auth/auth-request;
    proxy_pass_request_body off;
    proxy_set_header Content-Length "";
    # The original URL names this block's own server_name, never the client's Host header.
    proxy_set_header X-Original-URL $scheme://$server_name:$server_port$request_uri;
    proxy_set_header X-Original-Method $request_method;
    proxy_set_header X-Forwarded-For $remote_addr;
  }

  location / {
    auth_request /_gatehouse;
    auth_request_set $gatehouse_user $upstream_http_remote_user;
    auth_request_set $gatehouse_email $upstream_http_remote_email;
    auth_request_set $gatehouse_name $upstream_http_remote_name;
    auth_request_set $gatehouse_groups $upstream_http_remote_groups;
    auth_request_set $gatehouse_signin $upstream_http_location;
    # Not signed in: to Gatehouse's sign-in page, which sends the browser back afterwards.
    error_page 401 =302 $gatehouse_signin;

    # proxy_set_header replaces any Remote-* header the client sent; an empty value (a bypass,
    # whose answer has no Remote-*) sends no header at all. Never pass the client's own.
    # nginx drops client headers spelled with "_" (Remote_User), as long as underscores_in_headers
    # stays off (its default): leave it off.
    proxy_set_header Remote-User $gatehouse_user;
    proxy_set_header Remote-Email $gatehouse_email;
    proxy_set_header Remote-Name $gatehouse_name;
    proxy_set_header Remote-Groups $gatehouse_groups;
    proxy_set_header Host $host;
    proxy_set_header X-Forwarded-For $remote_addr;
    proxy_set_header X-Forwarded-Proto $scheme;
    proxy_pass APP_UPSTREAM;
  }
}
`

const IDENTITY = ['Remote-User', 'Remote-Email', 'Remote-Name', 'Remote-Groups']

export const CADDY_TEMPLATE = `SITE_ADDRESS {
	# \`route\` keeps this order (Caddy's default order would run forward_auth before request_header).
	route {
		# 1. Never trust a client's own identity headers, in either spelling: a CGI/WSGI-style app
		#    reads Remote_User as HTTP_REMOTE_USER too. On every path, bypass included.
${IDENTITY.map((h) => `\t\trequest_header -${h}\n\t\trequest_header -${h.replace('-', '_')}`).join('\n')}

		# 2. Ask Gatehouse: 2xx continues with the copied headers; 302 (sign-in), 401 and 403 go to the client.
		forward_auth GATEHOUSE_UPSTREAM {
			uri BASE_PATH/forward-auth/forward-auth
			copy_headers ${IDENTITY.join(' ')}
		}

		# 3. Caddy 2.6 copies a header the answer lacks (a bypass) as its literal placeholder
		#    "{http.reverse_proxy.header.Remote-User}": drop those.
${IDENTITY.map((h) => {
  const matcher = `@placeholder_${h.slice(7).toLowerCase()}`
  return `\t\t${matcher} header ${h} *reverse_proxy.header.${h}*\n\t\trequest_header ${matcher} -${h}`
}).join('\n')}

		reverse_proxy APP_UPSTREAM
	}
}
`

/**
 * Copy-paste proxy configuration for one rule's domain, with this Gatehouse's URLs filled in (the
 * panel's "Protected apps" view): the templates above, and Traefik's dynamic configuration.
 */
export function proxySnippets(apiURL: string, domain: string): { nginx: string; caddy: string; traefik: string } {
  const gatehouse = new URL(apiURL)
  const hostPort = `${gatehouse.hostname}:${gatehouse.port || (gatehouse.protocol === 'https:' ? '443' : '80')}`
  const id = domain.replace(/^\*\./, 'any.').replace(/[^a-z0-9]+/g, '-')
  let nginx = NGINX_TEMPLATE.replaceAll('LISTEN', '443 ssl')
    .replaceAll('SERVER_NAME', domain)
    .replaceAll('GATEHOUSE_API', apiURL)
    .replaceAll('APP_UPSTREAM', 'http://APP_HOST:APP_PORT')
  if (domain.startsWith('*.')) {
    // A wildcard server_name is no host name: the URL names the host nginx matched against it
    // ($host), which the default server above keeps to names under the wildcard.
    nginx = nginx.replace(
      '$scheme://$server_name:$server_port$request_uri;',
      '$scheme://$host:$server_port$request_uri; # $host: matched against the wildcard server_name',
    )
  }
  const caddy = CADDY_TEMPLATE.replaceAll('SITE_ADDRESS', domain)
    .replaceAll('GATEHOUSE_UPSTREAM', hostPort)
    .replaceAll('BASE_PATH', gatehouse.pathname.replace(/\/$/, ''))
    .replaceAll('APP_UPSTREAM', 'APP_HOST:APP_PORT')
  const rule = domain.startsWith('*.')
    ? `HostRegexp(\`{sub:[a-z0-9.-]+}.${domain.slice(2).replaceAll('.', '\\\\.')}\`)`
    : `Host(\`${domain}\`)`
  const both = IDENTITY.flatMap((h) => [h, h.replace('-', '_')])
  const traefik = `http:
  middlewares:
    gatehouse-strip:
      headers:
        customRequestHeaders:
${both.map((h) => `          ${h}: ""`).join('\n')}
    gatehouse:
      forwardAuth:
        address: "${apiURL}/forward-auth/forward-auth"
        trustForwardHeader: false
        authResponseHeaders: [${IDENTITY.join(', ')}]
  routers:
    ${id}:
      rule: "${rule}"
      middlewares: [gatehouse-strip, gatehouse]
      service: ${id}
      tls: {}
  services:
    ${id}:
      loadBalancer:
        servers:
          - url: "http://APP_HOST:APP_PORT"
`
  return { nginx, caddy, traefik }
}
