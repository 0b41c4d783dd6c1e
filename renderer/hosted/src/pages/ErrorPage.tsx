import { Anchor, Code, Stack, Text } from '@mantine/core'
import type { PageProps } from '../page-props'
import { pageURL } from '../api'
import { Layout } from '../Layout'

const KNOWN: Record<string, string> = {
  access_denied: 'Access was denied.',
  invalid_request: 'The application sent a request that could not be understood.',
  invalid_client: 'The application is not registered here.',
  unauthorized_client: 'The application is not allowed to do this.',
  login_required: 'You need to sign in first.',
  consent_required: 'Your permission is needed first.',
  server_error: 'The server met an unexpected problem.',
  INVALID_TOKEN: 'The link is invalid or has expired.',
  // The SAML identity provider's refusals (the description says why).
  saml_not_in_allowed_groups: 'You are not allowed to use this application.',
  saml_banned: 'Your account cannot sign in to applications.',
  saml_unknown_sp: 'The application is not registered here.',
  saml_request_not_found: 'The sign-in request has expired or was already used.',
}

/** Any other refusal of a SAML application's request. */
const SAML_SUMMARY = 'The application sent a sign-in request that was refused.'

/** `?error=<code>&error_description=<text>`: OAuth/OIDC errors and API redirects land here. */
export function ErrorPage({ config }: PageProps) {
  const params = new URLSearchParams(location.search)
  const error = params.get('error') ?? 'unknown_error'
  const description = params.get('error_description')
  return (
    <Layout config={config} title="Something went wrong">
      <Stack gap="xs">
        <Text data-testid="error-summary">
          {KNOWN[error] ?? (error.startsWith('saml_') ? SAML_SUMMARY : 'The request could not be completed.')}
        </Text>
        {description ? <Text data-testid="error-description">{description}</Text> : null}
        <Text size="sm" c="dimmed">
          Error code: <Code>{error}</Code>
        </Text>
      </Stack>
      <Anchor href={pageURL('sign-in')}>Go to sign-in</Anchor>
    </Layout>
  )
}
