import { Button, Group, Modal, Stack, Switch, Text } from '@mantine/core'
import { useState } from 'react'
import { Editable } from '../../access'
import { call, type PanelCallError, useOp, useOpMutation, useRereading } from '../../api'
import { ErrorNotice } from '../../components/common'
import { useStartup } from '../../startup'
import { NameImpactList } from './NameImpact'

/** The one group-name rule (`groups.*`), shared by the OIDC groups claim, forward auth, LDAP and SAML. */
const GROUP_SWITCHES = [
  ['roles', 'Gatehouse roles (admin)'],
  ['organizations', 'Organization slugs (acme)'],
  ['memberRoles', 'Roles in them (acme:admin)'],
  ['teams', 'Teams (acme/Developers)'],
] as const

type SwitchKey = (typeof GROUP_SWITCHES)[number][0]
type Impact = Array<{ where: string; name: string; problem: string }>

/**
 * The `groups.*` switches, applied live. Switching a kind off first asks `groups.impact` what it
 * takes away (issue 50 §5): when a SAML app's allowed groups name such a group, the change waits for
 * a confirmation that lists them, since nobody would pass those apps afterwards.
 */
export function GroupRuleSwitches({ onChanged }: { onChanged?: () => void }) {
  const groups = useOp('groups.settings', {})
  const configure = useOpMutation('groups.configure')
  const rereading = useRereading('groups.settings')
  const [pending, setPending] = useState<{ key: SwitchKey; impact: Impact } | null>(null)
  const [checkError, setCheckError] = useState<PanelCallError | null>(null)
  const [checking, setChecking] = useState(false)
  const rule = (groups.data ?? {}) as Record<string, boolean>
  // A switch set at start-up is read-only with the badge and the reason: a change would not take effect.
  const startup = useStartup()

  const apply = (key: SwitchKey, on: boolean) =>
    configure.mutate(
      { patch: { [key]: on }, base: { [`groups.${key}`]: rule[key] } },
      {
        onSuccess: () => {
          setPending(null)
          onChanged?.()
        },
      },
    )

  const change = async (key: SwitchKey, on: boolean) => {
    setCheckError(null)
    if (on) return apply(key, on)
    setChecking(true)
    try {
      const impact = await call('groups.impact', { patch: { [key]: false } })
      if (impact.length === 0) apply(key, false)
      else setPending({ key, impact })
    } catch (error) {
      setCheckError(error as PanelCallError)
    } finally {
      setChecking(false)
    }
  }

  const label = pending ? GROUP_SWITCHES.find(([key]) => key === pending.key)?.[1] : ''
  return (
    <Editable op="groups.configure">
      <Text fw={500}>The groups claim lists (the same names as forward auth, LDAP and SAML)</Text>
      <Group>
        {GROUP_SWITCHES.map(([key, text]) => (
          <Switch
            key={key}
            {...startup.field(`groups.${key}`, { label: text })}
            checked={rule[key] === true}
            // Until the rule is read again after a change, a click would act on the rule as it was.
            disabled={!groups.data || checking || configure.isPending || rereading}
            onChange={(e) => startup.of(`groups.${key}`) || void change(key, e.currentTarget.checked)}
            data-testid={`oidc-groups-${key}`}
          />
        ))}
      </Group>
      <ErrorNotice error={groups.error ?? configure.error ?? checkError} />
      <Modal opened={pending !== null} onClose={() => setPending(null)} title={`Switch off ${label}?`} data-testid="groups-impact">
        <Stack>
          <Text size="sm">
            Nobody would hold these group names any more, so what names them would let no one in. Change those first, or switch off anyway.
          </Text>
          <NameImpactList entries={pending?.impact ?? []} />
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setPending(null)}>
              Keep it on
            </Button>
            <Button
              color="red"
              loading={configure.isPending}
              onClick={() => pending && apply(pending.key, false)}
              data-testid="groups-impact-confirm"
            >
              Switch off anyway
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Editable>
  )
}
