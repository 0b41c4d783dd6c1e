import { Alert, Button, Code, Group, Stack, Text } from '@mantine/core'
import { IconPlayerPlay } from '@tabler/icons-react'
import { useEffect, useRef, useState } from 'react'
import { call, openExternal, useOpMutation } from '../../api'
import { Allowed } from '../../access'

/** What a test sign-in needs of a provider: a built-in one (providers.list) or a generic OAuth one. */
export interface TestableProvider {
  id: string
  name: string
  /** off: nothing to try yet (no client id). */
  status?: 'off' | 'configured' | 'enabled'
}

type TestState =
  | { status: 'idle' }
  | { status: 'pending'; testId: string }
  | { status: 'success'; email: string | null; name: string }
  | { status: 'failure'; code: string }

/**
 * "Test sign-in": opens the provider's page in a new window, then asks the server until the
 * provider has called back. Nobody is signed in; the outcome is the profile or the error code.
 */
export function TestSignIn({ provider }: { provider: TestableProvider }) {
  const [state, setState] = useState<TestState>({ status: 'idle' })
  const popup = useRef<Window | null>(null)
  const start = useOpMutation('providers.testSignIn')
  useEffect(() => {
    if (state.status !== 'pending') return
    let stopped = false
    const poll = async () => {
      while (!stopped) {
        const result = await call('providers.testResult', { testId: state.testId }).catch(() => null)
        if (stopped) return
        if (result && result.status !== 'pending') {
          // Closes it where the browser lets us (the panel's cross-origin isolation may not).
          popup.current?.close()
          setState(
            result.status === 'success'
              ? { status: 'success', email: result.profile?.email ?? null, name: result.profile?.name ?? '' }
              : { status: 'failure', code: result.code ?? 'unknown_error' },
          )
          return
        }
        await new Promise((r) => setTimeout(r, 700))
      }
    }
    void poll()
    return () => {
      stopped = true
    }
  }, [state])
  return (
    <Stack gap="xs" data-testid="test-sign-in">
      <Group>
        <Allowed op="providers.testSignIn">
          <Button
            variant="light"
            leftSection={<IconPlayerPlay size={16} />}
            loading={start.isPending || state.status === 'pending'}
            disabled={provider.status === 'off'}
            data-testid="test-sign-in-start"
            onClick={() =>
              start.mutate(
                { id: provider.id },
                {
                  onSuccess: ({ url, testId }) => {
                    if (window.gatehouse) openExternal(url)
                    else popup.current = window.open(url, 'gatehouse-test-sign-in', 'width=520,height=700')
                    setState({ status: 'pending', testId })
                  },
                  onError: (e) => setState({ status: 'failure', code: e.code }),
                },
              )
            }
          >
            Test sign-in
          </Button>
        </Allowed>
        {state.status === 'pending' && (
          <Button variant="default" onClick={() => setState({ status: 'idle' })}>
            Stop waiting
          </Button>
        )}
      </Group>
      <Text size="xs" c="dimmed">
        Opens {provider.name} in a new window; sign in there. Nobody is signed in here: the result (who the provider says you are, or its
        error code) appears below, and you can close that window.
      </Text>
      {state.status === 'success' && (
        <Alert color="teal" title="Test sign-in worked" data-testid="test-sign-in-result">
          {provider.name} answered with {state.name}
          {state.email ? ` <${state.email}>` : ''}.
        </Alert>
      )}
      {state.status === 'failure' && (
        <Alert color="red" title="Test sign-in failed" data-testid="test-sign-in-result">
          Error code <Code>{state.code}</Code>
        </Alert>
      )}
    </Stack>
  )
}
