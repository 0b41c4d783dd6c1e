import { Button, Group, Stack, Switch, TextInput } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useQueryClient } from '@tanstack/react-query'
import { useEffect, useMemo, useState } from 'react'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { ErrorNotice, Loading, PageHeader, showFieldErrors } from '../../components/common'
import { FormCard } from '../../components/FormCard'
import { ListenerStates } from '../../components/ListenerStates'
import { changedFields } from '../../config-save'
import { useStartup } from '../../startup'

/** `metrics.*` as this view edits it, read defensively from the effective config (defaults: the feature's). */
function metricsFormOf(effective: Record<string, unknown> | undefined): { enabled: boolean; address: string } {
  const raw = effective?.metrics
  const m = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>
  return {
    enabled: typeof m.enabled === 'boolean' ? m.enabled : false,
    address: typeof m.address === 'string' ? m.address : '127.0.0.1:9959',
  }
}

const FIELDS = ['metrics.enabled', 'metrics.address'] as const

/**
 * The Metrics view: the Prometheus listener's state and its switch and address (docs/OBSERVABILITY.md).
 * A save binds the new address before the old listener closes; one that cannot be bound is refused,
 * the reason beside the field, and the old listener keeps serving.
 */
export default function MetricsView() {
  const settings = useOp('settings.get', {}, { refetchOnWindowFocus: false })
  const save = useOpMutation('settings.update')
  const queries = useQueryClient()
  const current = useMemo(() => metricsFormOf(settings.data?.effective), [settings.data])
  const [form, setForm] = useState(current)
  const [errors, setErrors] = useState<Record<string, string>>({})
  // Keys set at start-up (--metrics-address, --config): read-only with the badge and the reason, and never saved.
  const startup = useStartup()
  useEffect(() => setForm(current), [current])
  if (settings.isPending) return <Loading />
  if (settings.error) return <ErrorNotice error={settings.error} onRetry={() => void settings.refetch()} />
  const fixed = Boolean(startup.of('metrics.enabled') && startup.of('metrics.address'))

  const submit = () => {
    setErrors({})
    const changed = changedFields(
      startup.leaveOut({ 'metrics.enabled': form.enabled, 'metrics.address': form.address.trim() }),
      settings.data.effective,
    )
    if (!changed) {
      notifications.show({ color: 'gray', title: 'Nothing to save', message: 'No metrics setting was changed.' })
      return
    }
    save.mutate(changed, {
      onSuccess: () => notifications.show({ color: 'teal', title: 'Saved', message: 'The metrics listener follows now.' }),
      onError: (e: PanelCallError) => {
        showFieldErrors(e, (field, message) => setErrors((m) => ({ ...m, [field]: message })), FIELDS, 'Not saved')
        void queries.invalidateQueries({ queryKey: ['listeners.state'] })
      },
    })
  }

  return (
    <Stack>
      <PageHeader
        title="Metrics"
        description="Prometheus metrics on a listener of their own, never on the API's port: GET /metrics (docs/OBSERVABILITY.md)."
      />
      <ListenerStates names={['metrics']} testId="metrics-listener-states" />
      <FormCard title="Listener" op="settings.update" testId="metrics-form" onSubmit={submit}>
        <Switch
          {...startup.field('metrics.enabled', { label: 'Metrics enabled' })}
          checked={form.enabled}
          onChange={(e) => {
            if (startup.of('metrics.enabled')) return
            const enabled = e.currentTarget.checked
            setForm((f) => ({ ...f, enabled }))
          }}
          error={errors['metrics.enabled']}
        />
        <TextInput
          {...startup.field('metrics.address', {
            label: 'Address',
            description: 'host:port of the metrics listener, e.g. 127.0.0.1:9959 or [::1]:9959',
          })}
          data-testid="metrics-address"
          value={form.address}
          onChange={(e) => {
            const address = e.currentTarget.value
            setForm((f) => ({ ...f, address }))
          }}
          error={errors['metrics.address']}
        />
        <Group>
          <Button type="submit" loading={save.isPending} disabled={fixed} data-testid="metrics-save">
            Save
          </Button>
        </Group>
      </FormCard>
    </Stack>
  )
}
