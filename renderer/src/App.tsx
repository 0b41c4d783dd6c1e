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
import { panelFeatures } from './features'
import { PanelFeatures, type PanelView } from './features/panel-feature'

/** The views of the feature folders (features/index.ts), in its order: one lazily loaded chunk each. */
const views: Record<string, PanelView> = Object.fromEntries(panelFeatures.flatMap((f) => f.views ?? []).map((v) => [v.name, v]))

export type ViewName = string

/** Old addresses that still open the right view. */
const MOVED: Record<string, ViewName> = Object.fromEntries(
  Object.values(views).flatMap((v) => (v.aliases ?? []).map((alias) => [alias, v.name])),
)

const viewFromHash = (): ViewName => {
  const raw = window.location.hash.replace(/^#\/?/, '').split('?')[0] ?? ''
  const name = MOVED[raw] ?? raw
  return name in views ? name : 'overview'
}

export function navigate(view: ViewName): void {
  window.location.hash = `#/${view}`
}

function useHashView(): ViewName {
  const [view, setView] = useState<ViewName>(viewFromHash)
  useEffect(() => {
    const update = () => setView(viewFromHash())
    window.addEventListener('hashchange', update)
    return () => window.removeEventListener('hashchange', update)
  }, [])
  return view
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

export function App() {
  const view = useHashView()
  const [opened, { toggle, close }] = useDisclosure()
  const { Page } = views[view] as PanelView
  useEffect(() => {
    document.title = `${views[view]?.label} · Gatehouse`
  }, [view])
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="lg">
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
      <AppShell.Main>
        <PanelFeatures.Provider value={panelFeatures}>
          <Suspense fallback={<Loading />}>
            <Page />
          </Suspense>
        </PanelFeatures.Provider>
      </AppShell.Main>
    </AppShell>
  )
}
