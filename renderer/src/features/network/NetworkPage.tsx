import { Alert, Button, Card, Code, Group, NumberInput, Radio, Select, Stack, Text, TextInput, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { IconAlertTriangle, IconCircleCheck, IconLock, IconNetwork, IconPlugConnected } from '@tabler/icons-react'
import { useEffect, useState } from 'react'
import type { OpOutput } from '../../../../server/panel/contract'
import { call, type PanelCallError, useOp, useOpMutation } from '../../api'
import { Editable } from '../../access'
import { ErrorNotice, Loading, PageHeader } from '../../components/common'
import { StartupBadge } from '../../startup'

type Listen = 'loopback' | 'lan'
interface Form {
  listen: Listen
  interface: string | null
  port: number
  baseURL: string
}

const ALL = '__all__'

/** A value fixed by a flag or GATEHOUSE_* variable: shown, not editable here (the shared start-up badge, renderer/src/startup.tsx). */
function OverrideNote({ source }: { source?: string }) {
  if (!source) return null
  return (
    <StartupBadge source={source} testId="network-override">
      <Group gap={4} component="span" wrap="nowrap">
        <IconLock size={12} aria-hidden />
        Set at start-up by {source}
      </Group>
    </StartupBadge>
  )
}

/**
 * Why a field set at start-up is read-only (still focusable): its description, so `aria-describedby`
 * names it. Worded apart from the badge beside it, so the two never read the same.
 */
const startupReason = (source?: string) =>
  source ? `Read-only here: ${source} sets it at start-up and wins over the panel; change it where the server is started.` : undefined

type NetworkInfo = OpOutput<'network.get'>

/** Where the API listens now. */
function ListenerStatus({ current }: { current: NetworkInfo['current'] }) {
  return (
    <Card withBorder>
      <Group gap="xs">
        <IconPlugConnected size={18} />
        <Text size="sm">
          {current.listening ? 'Listening on' : 'Not listening'}{' '}
          <Code data-testid="network-current">
            {current.host}:{current.port}
          </Code>{' '}
          — API URL <Code data-testid="network-api-url">{current.apiURL}</Code>
        </Text>
      </Group>
    </Card>
  )
}

/** The chosen port is in use: the listener stayed; a free port is offered. */
function PortTaken({ taken, onUse }: { taken: { message: string; suggestedPort: number | null }; onUse: (port: number) => void }) {
  return (
    <Alert color="red" icon={<IconAlertTriangle />} title="Port taken" data-testid="network-port-taken">
      <Stack gap="xs">
        <Text size="sm">{taken.message}. The listener was not changed.</Text>
        {taken.suggestedPort && (
          <Group>
            <Button size="xs" onClick={() => onUse(taken.suggestedPort!)} data-testid="network-use-free-port">
              Use port {taken.suggestedPort}
            </Button>
          </Group>
        )}
      </Stack>
    </Alert>
  )
}

/** Base URLs proposed from this machine's LAN address and host name. */
function Proposals({ proposals, onUse }: { proposals: NetworkInfo['proposals']; onUse: (url: string) => void }) {
  return (
    <Stack gap={4}>
      <Text size="xs" c="dimmed">
        Proposed from this machine's LAN address and host name:
      </Text>
      {proposals.map((p) => (
        <Group key={p.url} gap="xs">
          <Code>{p.url}</Code>
          <Button size="compact-xs" variant="light" onClick={() => onUse(p.url)} data-testid="network-use-proposal">
            Use
          </Button>
        </Group>
      ))}
    </Stack>
  )
}

/** Asks the server whether the base URL reaches it from this machine. */
function ReachabilityCheck({ url }: { url: string }) {
  const [check, setCheck] = useState<{ url: string; reachable: boolean; message: string } | null>(null)
  const [checking, setChecking] = useState(false)
  const runCheck = async (url: string) => {
    setChecking(true)
    try {
      setCheck(await call('network.check', { baseURL: url }))
    } catch (e) {
      setCheck({ url, reachable: false, message: (e as PanelCallError).message })
    } finally {
      setChecking(false)
    }
  }

  return (
    <>
      <Group>
        <Button
          variant="default"
          size="xs"
          leftSection={<IconNetwork size={14} />}
          loading={checking}
          onClick={() => void runCheck(url)}
          data-testid="network-check"
        >
          Check reachability from this machine
        </Button>
      </Group>
      {check && (
        <Alert
          color={check.reachable ? 'teal' : 'red'}
          icon={check.reachable ? <IconCircleCheck /> : <IconAlertTriangle />}
          data-testid="network-check-result"
        >
          <Text size="sm">
            {check.message}: <Code>{check.url}</Code>
          </Text>
        </Alert>
      )}
    </>
  )
}

export default function NetworkPage() {
  const info = useOp('network.get', {})
  const apply = useOpMutation('network.apply')
  const [form, setForm] = useState<Form | null>(null)
  const [taken, setTaken] = useState<{ message: string; suggestedPort: number | null } | null>(null)

  useEffect(() => {
    if (info.data && !form) {
      const { stored } = info.data
      setForm({ listen: stored.listen, interface: stored.interface, port: stored.port, baseURL: stored.baseURL ?? '' })
    }
  }, [info.data, form])

  if (info.isError) return <ErrorNotice error={info.error} onRetry={() => void info.refetch()} />
  if (!info.data || !form) return <Loading />
  const { current, overrides, interfaces, proposals, canSave } = info.data
  const lanInterfaces = [...new Set(interfaces.filter((i) => !i.internal && i.family === 'IPv4').map((i) => i.name))]
  const addressOf = (name: string) => interfaces.find((i) => i.name === name && i.family === 'IPv4')?.address

  const submit = (port = form.port) => {
    setTaken(null)
    apply.mutate(
      { listen: form.listen, interface: form.listen === 'lan' ? form.interface : null, port, baseURL: form.baseURL.trim() || null },
      {
        onSuccess: (result) => {
          if (!result.applied) {
            setTaken({ message: result.message, suggestedPort: result.suggestedPort })
            return
          }
          setForm({ ...form, port })
          notifications.show({ color: 'teal', title: 'Listener restarted', message: `The API now answers on ${result.apiURL}` })
        },
        onError: (e) => notifications.show({ color: 'red', title: 'Not applied', message: e.message }),
      },
    )
  }

  return (
    <Stack>
      <PageHeader
        title="Network"
        description="Where the API listens and the address apps use to reach it. Applying restarts the API listener only: sessions, settings and the panel stay."
      />
      <ListenerStatus current={current} />

      <Card withBorder>
        <Editable op="network.apply" note>
          <Stack>
            <Group justify="space-between">
              <Title order={4}>Listen on</Title>
              <OverrideNote source={overrides.host?.source} />
            </Group>
            <Radio.Group
              value={form.listen}
              onChange={(value) => setForm({ ...form, listen: value as Listen })}
              name="listen"
              label="Listen on"
              labelProps={{ className: 'visually-hidden' }}
              readOnly={!!overrides.host}
              description={startupReason(overrides.host?.source)}
            >
              <Stack gap="xs">
                <Radio value="loopback" label="This computer only (127.0.0.1)" data-testid="listen-loopback" />
                <Radio value="lan" label="The local network (other computers can call it)" data-testid="listen-lan" />
              </Stack>
            </Radio.Group>
            {form.listen === 'lan' && (
              <Select
                label="Interface"
                description={startupReason(overrides.host?.source) ?? 'One network interface, or all of them (0.0.0.0)'}
                readOnly={!!overrides.host}
                data={[
                  { value: ALL, label: 'All interfaces (0.0.0.0)' },
                  ...lanInterfaces.map((name) => ({ value: name, label: `${name} (${addressOf(name)})` })),
                ]}
                value={form.interface ?? ALL}
                onChange={(value) => setForm({ ...form, interface: !value || value === ALL ? null : value })}
                allowDeselect={false}
                data-testid="network-interface"
              />
            )}
            {form.listen === 'lan' && (
              <Alert color="yellow" icon={<IconAlertTriangle />}>
                Anyone on the network can then reach the API. Use an https base URL behind a reverse proxy if the network is not trusted.
              </Alert>
            )}

            <Group justify="space-between" mt="sm">
              <Title order={4}>Port</Title>
              <OverrideNote source={overrides.port?.source} />
            </Group>
            <NumberInput
              label="API port"
              min={1}
              max={65535}
              allowDecimal={false}
              value={overrides.port ? Number(overrides.port.value) : form.port}
              onChange={(value) => setForm({ ...form, port: Number(value) || 0 })}
              readOnly={!!overrides.port}
              description={startupReason(overrides.port?.source)}
              data-testid="network-port"
              w={200}
            />
            {taken && <PortTaken taken={taken} onUse={(port) => submit(port)} />}

            <Group justify="space-between" mt="sm">
              <Title order={4}>Public base URL</Title>
              <OverrideNote source={overrides.baseURL?.source} />
            </Group>
            <TextInput
              label="Base URL apps use"
              description={
                startupReason(overrides.baseURL?.source) ??
                'Links in mail and cookie security follow it. Empty: http://ADDRESS:PORT of the listener.'
              }
              placeholder="http://192.168.1.20:4280"
              value={overrides.baseURL ? overrides.baseURL.value : form.baseURL}
              onChange={(e) => setForm({ ...form, baseURL: e.currentTarget.value })}
              readOnly={!!overrides.baseURL}
              data-testid="network-base-url"
            />
            {proposals.length > 0 && !overrides.baseURL && (
              <Proposals proposals={proposals} onUse={(url) => setForm({ ...form, baseURL: url })} />
            )}
            <ReachabilityCheck url={(overrides.baseURL?.value ?? form.baseURL.trim()) || new URL(current.apiURL).origin} />

            <Group justify="flex-end" mt="md">
              <Button onClick={() => submit()} loading={apply.isPending} disabled={!canSave} data-testid="network-apply">
                Apply and restart the listener
              </Button>
            </Group>
          </Stack>
        </Editable>
      </Card>
    </Stack>
  )
}
