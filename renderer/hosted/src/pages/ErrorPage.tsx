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
}

/** `?error=<code>&error_description=<text>`: OAuth/OIDC errors and API redirects land here. */
export function ErrorPage({ config }: PageProps) {
  const params = new URLSearchParams(location.search)
  const error = params.get('error') ?? 'unknown_error'
  const description = params.get('error_description')
  return (
    <Layout config={config} title="Something went wrong">
      <Stack gap="xs">
        <Text data-testid="error-summary">{KNOWN[error] ?? 'The request could not be completed.'}</Text>
        {description ? <Text data-testid="error-description">{description}</Text> : null}
        <Text size="sm" c="dimmed">
          Error code: <Code>{error}</Code>
        </Text>
      </Stack>
      <Anchor href={pageURL('sign-in')}>Go to sign-in</Anchor>
    </Layout>
  )
}
