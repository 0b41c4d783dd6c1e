import {
  ActionIcon,
  AppShell,
  Badge,
  Burger,
  Code,
  CopyButton,
  Group,
  NavLink,
  ScrollArea,
  Text,
  Tooltip,
  useComputedColorScheme,
  useMantineColorScheme,
} from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { IconCheck, IconCopy, IconMoon, IconShieldLock, IconSun } from '@tabler/icons-react'
import { Suspense, useEffect, useState } from 'react'
import { transport, useOp } from './api'
import { Loading } from './components/common'
import { CallerBadge, PanelGate, ViewLoadBoundary } from './PanelSignIn'
import { panelFeatures } from './features'
import { PanelFeatures, type PanelView } from './features/panel-feature'
import { hasUnsaved, LeaveDialog } from './unsaved'

/** The views of the feature folders (features/index.ts), in its order: one lazily loaded chunk each. */
const views: Record<string, PanelView> = Object.fromEntries(panelFeatures.flatMap((f) => f.views ?? []).map((v) => [v.name, v]))

export type ViewName = string

/** Old addresses that still open the right view. */
const MOVED: Record<string, ViewName> = Object.fromEntries(
  Object.values(views).flatMap((v) => (v.aliases ?? []).map((alias) => [alias, v.name])),
)

const viewFromHash = (hash = window.location.hash): ViewName => {
  // `#/users/<id>`: the view is the first segment, the rest a drawer's deep link (deep-link.ts).
  const raw = (hash.replace(/^#\/?/, '').split('?')[0] ?? '').split('/')[0] ?? ''
  const name = MOVED[raw] ?? raw
  return name in views ? name : 'overview'
}

export function navigate(view: ViewName): void {
  window.location.hash = `#/${view}`
}

/** The view in the address; leaving a view with unsaved edits (unsaved.tsx) waits for the answer of the leave dialog. */
function useHashView(): { view: ViewName; leaving: string | null; stay: () => void } {
  const [view, setView] = useState<ViewName>(viewFromHash)
  const [leaving, setLeaving] = useState<string | null>(null)
  useEffect(() => {
    let shown = window.location.hash
    const update = () => {
      const next = viewFromHash()
      if (next !== viewFromHash(shown) && hasUnsaved()) {
        // Back to the address of the view being edited (no hashchange), and ask.
        setLeaving(window.location.hash)
        window.history.replaceState(null, '', shown)
        return
      }
      shown = window.location.hash
      setView(next)
    }
    window.addEventListener('hashchange', update)
    return () => window.removeEventListener('hashchange', update)
  }, [])
  return { view, leaving, stay: () => setLeaving(null) }
}

function ServerStatus() {
  const info = useOp('server.info', {}, { refetchInterval: 15_000 })
  if (info.isError) {
    return (
      <Badge color="red" variant="light" data-testid="server-status">
        Server unreachable
      </Badge>
    )
  }
  if (!info.data) return null
  return (
    <Group gap="xs" wrap="nowrap">
      <Badge color="teal" variant="dot" data-testid="server-status">
        Running
      </Badge>
      <Code data-testid="api-url">{info.data.apiURL}</Code>
      <CopyButton value={info.data.apiURL}>
        {({ copied, copy }) => (
          <Tooltip label={copied ? 'Copied' : 'Copy API URL'} withArrow>
            <ActionIcon variant="subtle" color={copied ? 'teal' : 'gray'} onClick={copy} aria-label="Copy API URL">
              {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
      <Text size="xs" c="dimmed" visibleFrom="md">
        v{info.data.version}
      </Text>
    </Group>
  )
}

function ColorSchemeToggle() {
  const { setColorScheme } = useMantineColorScheme()
  const computed = useComputedColorScheme('light')
  return (
    <ActionIcon variant="default" aria-label="Toggle color scheme" onClick={() => setColorScheme(computed === 'light' ? 'dark' : 'light')}>
      {computed === 'light' ? <IconMoon size={16} /> : <IconSun size={16} />}
    </ActionIcon>
  )
}

/**
 * Escape in a dialog opened from a drawer closes only the dialog (which returns focus to the control
 * that opened it); with no dialog open, it closes the drawer. Mantine closes every open drawer and
 * dialog on the same key press, so drawers leave Escape to this handler (main.tsx), which runs after
 * the dialogs' own (they listen in the capture phase) and sees whether one was open.
 */
function closeDrawerOnEscape(event: KeyboardEvent): void {
  if (event.key !== 'Escape' || event.isComposing) return
  if (document.querySelector('.mantine-Modal-content')) return
  // An open select or picker list takes this Escape for itself (seen before its handler closed it).
  if (dropdownOpenAtEscape) return
  const drawers = document.querySelectorAll<HTMLButtonElement>('.mantine-Drawer-content .mantine-Drawer-close')
  drawers[drawers.length - 1]?.click()
}

/** Whether a combobox list was open when the current Escape went down (captured before any handler). */
let dropdownOpenAtEscape = false
function noteOpenDropdown(event: KeyboardEvent): void {
  if (event.key !== 'Escape') return
  const lists = document.querySelectorAll('.mantine-Popover-dropdown, [role="listbox"]')
  // Shown ones only: a kept-mounted list is display:none (no client rects) while closed.
  dropdownOpenAtEscape = [...lists].some((list) => list.getClientRects().length > 0)
}

/** The skip link moves focus to the view without touching the address (the hash names the view). */
function skipToContent(): void {
  document.getElementById('main')?.focus()
}

export function App() {
  return (
    <PanelGate>
      <Shell />
    </PanelGate>
  )
}

function Shell() {
  const { view, leaving, stay } = useHashView()
  useEffect(() => {
    window.addEventListener('keydown', noteOpenDropdown, true)
    window.addEventListener('keydown', closeDrawerOnEscape)
    return () => {
      window.removeEventListener('keydown', noteOpenDropdown, true)
      window.removeEventListener('keydown', closeDrawerOnEscape)
    }
  }, [])
  const [opened, { toggle, close }] = useDisclosure()
  const { Page } = views[view] as PanelView
  useEffect(() => {
    document.title = `${views[view]?.label} · Gatehouse`
  }, [view])
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="lg">
      <button type="button" className="skip-link" data-testid="skip-to-content" onClick={skipToContent}>
        Skip to content
      </button>
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" />
            <IconShieldLock size={22} />
            <Text fw={700}>Gatehouse</Text>
            <Badge variant="light" color="gray" size="sm">
              {transport() === 'ipc' ? 'desktop' : 'browser panel'}
            </Badge>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <ServerStatus />
            <CallerBadge />
            <ColorSchemeToggle />
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs">
        <ScrollArea>
          {Object.values(views).map(({ name, label, icon: Icon }) => {
            return (
              <NavLink
                key={name}
                href={`#/${name}`}
                label={label}
                active={name === view}
                leftSection={<Icon size={18} />}
                onClick={close}
                data-testid={`nav-${name}`}
              />
            )
          })}
        </ScrollArea>
      </AppShell.Navbar>
      <AppShell.Main id="main" tabIndex={-1}>
        <ViewLoadBoundary view={view}>
          <PanelFeatures.Provider value={panelFeatures}>
            <Suspense fallback={<Loading />}>
              <Page />
            </Suspense>
          </PanelFeatures.Provider>
        </ViewLoadBoundary>
        <LeaveDialog target={leaving} onStay={stay} />
      </AppShell.Main>
    </AppShell>
  )
}
