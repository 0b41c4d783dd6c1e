/**
 * The address of a hosted page (`{baseURL}/ui/<page>`, issue 17), the one place it is spelled: the
 * faces that send a person to a page (OIDC, SAML, forward auth, sign-in by redirect), the mails that
 * link to one and the LDAP refusal that names one all build it here, with the query encoded one way.
 * `page` is a name a feature declares in its pages.ts (server/features/hosted-page-list.ts;
 * tests/unit/one-copy.test.ts checks every literal given here against that list).
 */
export function hostedPageURL(at: { baseURL: string }, page: string, params: Record<string, string> = {}): string {
  const query = new URLSearchParams(params).toString()
  return `${at.baseURL}/ui/${page}${query ? `?${query}` : ''}`
}

/** The same, or null when the hosted pages are off (`hostedPages.enabled`): there is no page to send anyone to. */
export function hostedPageIfOn(
  ctx: { baseURL: string; config(): { hostedPages: { enabled: boolean } } },
  page: string,
  params: Record<string, string> = {},
): string | null {
  return ctx.config().hostedPages.enabled ? hostedPageURL(ctx, page, params) : null
}
