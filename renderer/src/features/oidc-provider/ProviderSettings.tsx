import { Badge, Button, Card, Group, List, Modal, NumberInput, Stack, Text } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useEffect, useState } from 'react'
import { Editable } from '../../access'
import { useOp, useOpMutation, useRereading } from '../../api'
import { ErrorNotice, Loading } from '../../components/common'
import { duration } from '../../format'
import { ink } from '../../ink'
import { useUnsaved } from '../../unsaved'
import { useStartup } from '../../startup'
import { GroupRuleSwitches } from '../groups/GroupRuleSwitches'

const LIFETIMES = [
  ['authorizationCode', 'Authorization code'],
  ['accessToken', 'Access token'],
  ['idToken', 'ID token'],
  ['refreshToken', 'Refresh token'],
  ['clientCredentials', 'Client-credentials token'],
  ['session', 'SSO session'],
  ['grant', 'Consent (grant)'],
  ['interaction', 'Sign-in request'],
] as const

/**
 * `oidcProvider.ttl` as durations (seconds, with the duration spelled out, as in Settings), saved
 * together after a review of what changes; a view left with unsaved lifetimes asks first.
 */
function Lifetimes({ ttl }: { ttl: Record<string, number> }) {
  const configure = useOpMutation('oidc.configure')
  const [draft, setDraft] = useState<Record<string, number | ''>>({})
  const [reviewing, setReviewing] = useState(false)
  // A saved lifetime stays in the draft until the view has read it back (the draft then equals it
  // and is dropped): cleared at once, the field would show the value from before the save, and a
  // second save before the reread would send that as its base and be refused as another admin's
  // change (409). Saving waits for the reread.
  const rereading = useRereading('oidc.settings')
  useEffect(() => {
    setDraft((d) => {
      const kept = Object.entries(d).filter(([key, value]) => value !== ttl[key])
      return kept.length === Object.keys(d).length ? d : Object.fromEntries(kept)
    })
  }, [ttl])
  // A lifetime set at start-up is read-only with the badge and the reason, and never saved.
  const startup = useStartup()
  const changed = LIFETIMES.filter(([key]) => key in draft && draft[key] !== ttl[key] && !startup.of(`oidcProvider.ttl.${key}`))
  const invalid = changed.some(([key]) => typeof draft[key] !== 'number' || (draft[key] as number) < 1)
  useUnsaved('sso-lifetimes', changed.length > 0)
  const shown = (v: number | '' | undefined) => (typeof v === 'number' ? `${v} s (${duration(v)})` : 'empty')
  return (
    <>
      <Text fw={500}>Lifetimes</Text>
      <Group align="flex-start">
        {LIFETIMES.map(([key, label]) => {
          const value = key in draft ? draft[key] : ttl[key]
          return (
            <NumberInput
              key={key}
              {...startup.field(`oidcProvider.ttl.${key}`, {
                label,
                description: typeof value === 'number' && value > 0 ? duration(value) : ' ',
              })}
              w={190}
              min={1}
              allowDecimal={false}
              suffix=" s"
              value={value ?? ''}
              error={value === '' || (typeof value === 'number' && value < 1) ? 'Must be at least 1 second' : undefined}
              onChange={(v) => setDraft((d) => ({ ...d, [key]: v === '' ? '' : Number(v) }))}
              data-testid={`oidc-ttl-${key}`}
            />
          )
        })}
      </Group>
      <Group justify="flex-end">
        {changed.length > 0 && (
          <Badge color={ink.accent} variant="outline" data-testid="oidc-ttl-unsaved">
            {changed.length} unsaved change{changed.length === 1 ? '' : 's'}
          </Badge>
        )}
        <Button variant="default" disabled={changed.length === 0} onClick={() => setDraft({})}>
          Discard
        </Button>
        <Button disabled={changed.length === 0 || invalid || rereading} onClick={() => setReviewing(true)} data-testid="oidc-ttl-save">
          Review and save
        </Button>
      </Group>
      <Modal opened={reviewing} onClose={() => setReviewing(false)} title="Save token lifetimes?" centered>
        <Stack>
          <List size="sm" data-testid="oidc-ttl-review">
            {changed.map(([key, label]) => (
              <List.Item key={key}>
                <Text span fw={600} size="sm">
                  {label}
                </Text>
                : {shown(ttl[key])} → {shown(draft[key])}
              </List.Item>
            ))}
          </List>
          <Text size="sm">New tokens get the new lifetimes; tokens already issued keep theirs.</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setReviewing(false)}>
              Keep editing
            </Button>
            <Button
              loading={configure.isPending}
              data-testid="oidc-ttl-confirm"
              onClick={() =>
                configure.mutate(
                  {
                    patch: { ttl: Object.fromEntries(changed.map(([key]) => [key, draft[key]])) },
                    // As this view read them: a lifetime another admin changed since is refused (409), not overwritten.
                    base: Object.fromEntries(changed.map(([key]) => [`oidcProvider.ttl.${key}`, ttl[key] ?? null])),
                  },
                  {
                    onSuccess: () => {
                      notifications.show({ color: 'teal', title: 'Token lifetimes saved', message: 'New tokens use them from now on.' })
                    },
                    onSettled: () => setReviewing(false),
                  },
                )
              }
            >
              Save {changed.length} change{changed.length === 1 ? '' : 's'}
            </Button>
          </Group>
          <ErrorNotice error={configure.error} />
        </Stack>
      </Modal>
    </>
  )
}

/** The group names (`groups.*`, applied live to every face) and the lifetimes. */
export function ProviderSettings() {
  const settings = useOp('oidc.settings', {})
  const configure = useOpMutation('oidc.configure')
  if (!settings.data) return settings.error ? <ErrorNotice error={settings.error} /> : <Loading />
  const s = settings.data as { ttl: Record<string, number> }
  return (
    <Card withBorder>
      <Editable op="oidc.configure">
        <Stack gap="xs">
          <GroupRuleSwitches />
          <Lifetimes ttl={s.ttl} />
          <ErrorNotice error={configure.error} />
        </Stack>
      </Editable>
    </Card>
  )
}
