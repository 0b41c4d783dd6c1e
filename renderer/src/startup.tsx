import { Badge, Group, Tooltip } from '@mantine/core'
import type { ReactNode } from 'react'
import { startupKeyFor, type StartupKey } from '../../server/config/startup'
import { useOp } from './api'
import { ink } from './ink'

export { startupKeyFor, type StartupKey } from '../../server/config/startup'

/**
 * Keys set at start-up (issue 50 §3): the `--config` file, a flag or a GATEHOUSE_* variable set
 * them, and they win over what the panel stores. The server says which in one answer
 * (`settings.get`'s `startup`: each key with its source); every view that edits a key asks here,
 * shows the key read-only (still focusable) with the badge and the reason naming the source, and
 * leaves it out of its save, which the server would refuse (409 SET_AT_STARTUP) since it would
 * not take effect. The Settings, LDAP, Metrics, Single sign-on, two-factor and Overview views use
 * this one piece; the Network view's start-up values (host, port, base URL: flags of their own,
 * not config keys) say their source with the same badge and reason.
 */

/** Why a key set at start-up is read-only here: shown under it (its description, so `aria-describedby` names it). */
export function startupReason(source: string): string {
  return `Set at start-up by ${source}, which wins over the panel: change it where the server is started.`
}

/** The badge beside a field's label (its tooltip names the source). */
export function StartupBadge({
  source,
  testId = 'startup-badge',
  children = 'set at start-up',
}: {
  source: string
  testId?: string
  children?: ReactNode
}) {
  return (
    <Tooltip label={`Set by ${source} at start-up, which wins over the panel`} withArrow>
      <Badge size="xs" color={ink.special} variant="outline" data-testid={testId} data-source={source}>
        {children}
      </Badge>
    </Tooltip>
  )
}

/** A field's label with the badge when the key is set at start-up. */
export function StartupLabel({ label, startup }: { label: ReactNode; startup: StartupKey | undefined }): ReactNode {
  if (!startup) return label
  return (
    <Group gap={6} component="span">
      {label}
      <StartupBadge source={startup.source} />
    </Group>
  )
}

/** A field's description with the reason under it when the key is set at start-up. */
export function startupDescription(description: ReactNode, startup: StartupKey | undefined): ReactNode {
  if (!startup) return description
  return (
    <>
      {description}
      {description ? <br /> : null}
      <span data-testid="startup-reason">{startupReason(startup.source)}</span>
    </>
  )
}

export interface Startup {
  /** The server's answer is in (before it, nothing is known to be set at start-up). */
  ready: boolean
  keys: StartupKey[]
  /** The start-up key this path is, is under or holds. */
  of(path: string): StartupKey | undefined
  /**
   * A Mantine input's label, description and read-only marks for `path`: unchanged when the panel
   * may set it; else the badge in the label, the reason in the description, `readOnly` and
   * `aria-readonly` (a switch has no read-only state of its own: its onChange must ask `of`).
   */
  field(
    path: string,
    props: { label: ReactNode; description?: ReactNode },
  ): {
    label: ReactNode
    description?: ReactNode
    readOnly?: boolean
    'aria-readonly'?: boolean
  }
  /** Form values by dotted path without the keys set at start-up: what a save may send. */
  leaveOut<T>(values: Record<string, T>): Record<string, T>
}

/** The keys set at start-up, from `settings.get` (one cached answer shared by every view). */
export function useStartup(): Startup {
  const settings = useOp('settings.get', {}, { refetchOnWindowFocus: false })
  const keys = settings.data?.startup ?? []
  const of = (path: string) => startupKeyFor(keys, path)
  return {
    ready: settings.data !== undefined,
    keys,
    of,
    field(path, { label, description }) {
      const key = of(path)
      if (!key) return { label, description }
      return {
        label: <StartupLabel label={label} startup={key} />,
        description: startupDescription(description, key),
        readOnly: true,
        'aria-readonly': true,
      }
    },
    leaveOut: (values) => Object.fromEntries(Object.entries(values).filter(([path]) => !of(path))),
  }
}
