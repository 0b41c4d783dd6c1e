const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c)

/** Security headers carried by every HTML answer. */
export const HTML_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
}

/**
 * GET /error (SPEC §2): heading, generic message, the escaped error code (and, as better-auth 1.7
 * shows it, the escaped error_description), a link back to /.
 */
export function renderErrorPage(code: string, description?: string): string {
  const safe = escapeHtml(code.slice(0, 200))
  const detail = description ? `\n<p>${escapeHtml(description.slice(0, 500))}</p>` : ''
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Error</title>
<style>
body{font-family:system-ui,sans-serif;display:flex;min-height:100vh;align-items:center;justify-content:center;margin:0;background:#f8f9fa;color:#212529}
main{max-width:32rem;padding:2rem;text-align:center}
code{background:#e9ecef;padding:.2rem .4rem;border-radius:4px}
a{color:#1c7ed6}
</style>
</head>
<body>
<main>
<h1>Something went wrong</h1>
<p>We encountered an unexpected error while signing you in. Please try again.</p>
<p>Error code: <code>${safe}</code></p>${detail}
<p><a href="/">Return to Application</a></p>
</main>
</body>
</html>`
}
