/**
 * Copy-paste proxy configuration for one rule's domain, with this Gatehouse's URLs filled in (the
 * panel's "Protected apps" view). The same shapes as docs/FORWARD-AUTH.md, whose nginx and Caddy
 * blocks the test suite runs.
 */
export function proxySnippets(apiURL: string, domain: string): { nginx: string; caddy: string; traefik: string } {
  const gatehouse = new URL(apiURL)
  const hostPort = `${gatehouse.hostname}:${gatehouse.port || (gatehouse.protocol === 'https:' ? '443' : '80')}`
  const name = domain
  const id = domain.replace(/^\*\./, 'any.').replace(/[^a-z0-9]+/g, '-')
  const nginx = `server {
  listen 443 ssl;
  server_name ${name};
  # ssl_certificate / ssl_certificate_key ...

  location = /_gatehouse {
    internal;
    proxy_pass ${apiURL}/forward-auth/auth-request;
    proxy_pass_request_body off;
    proxy_set_header Content-Length "";
    proxy_set_header X-Original-URL $scheme://$http_host$request_uri;
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
    error_page 401 =302 $gatehouse_signin;
    proxy_set_header Remote-User $gatehouse_user;
    proxy_set_header Remote-Email $gatehouse_email;
    proxy_set_header Remote-Name $gatehouse_name;
    proxy_set_header Remote-Groups $gatehouse_groups;
    proxy_set_header Host $http_host;
    proxy_pass http://APP_HOST:APP_PORT;
  }
}
`
  const headers = ['Remote-User', 'Remote-Email', 'Remote-Name', 'Remote-Groups']
  const caddy = `${name} {
	route {
${headers.map((h) => `		request_header -${h}`).join('\n')}
		forward_auth ${hostPort} {
			uri ${gatehouse.pathname.replace(/\/$/, '')}/forward-auth/forward-auth
			copy_headers ${headers.join(' ')}
		}
${headers
  .map((h) => {
    const m = `@placeholder_${h.slice(7).toLowerCase()}`
    return `		${m} header ${h} *reverse_proxy.header.${h}*\n		request_header ${m} -${h}`
  })
  .join('\n')}
		reverse_proxy APP_HOST:APP_PORT
	}
}
`
  const rule = domain.startsWith('*.')
    ? `HostRegexp(\`{sub:[a-z0-9.-]+}.${domain.slice(2).replaceAll('.', '\\\\.')}\`)`
    : `Host(\`${domain}\`)`
  const traefik = `http:
  middlewares:
    gatehouse-strip:
      headers:
        customRequestHeaders:
${headers.map((h) => `          ${h}: ""`).join('\n')}
    gatehouse:
      forwardAuth:
        address: "${apiURL}/forward-auth/forward-auth"
        trustForwardHeader: false
        authResponseHeaders: [${headers.join(', ')}]
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
