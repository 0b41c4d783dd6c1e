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
import {
  IconBuilding,
  IconCertificate,
  IconCheck,
  IconCopy,
  IconDatabaseExport,
  IconGauge,
  IconKey,
  IconListDetails,
  IconMail,
  IconMoon,
  IconNetwork,
  IconShieldLock,
  IconSettings,
  IconSun,
  IconUsers,
} from '@tabler/icons-react'
import { type ComponentType, lazy, Suspense, useEffect, useState } from 'react'
import { transport, useOp } from './api'
import { Loading } from './components/common'
import { CallerBadge, PanelGate, ViewLoadBoundary } from './PanelSignIn'

/** One lazily loaded chunk per view. */
const views = {
  overview: { label: 'Overview', icon: IconGauge, Page: lazy(() => import('./features/overview/OverviewPage')) },
  users: { label: 'Users', icon: IconUsers, Page: lazy(() => import('./features/admin/Users')) },
  organizations: { label: 'Organizations', icon: IconBuilding, Page: lazy(() => import('./features/organization/OrganizationsPage')) },
  providers: { label: 'Providers', icon: IconKey, Page: lazy(() => import('./features/social/ProvidersPage')) },
  email: { label: 'Email', icon: IconMail, Page: lazy(() => import('./features/mail/EmailPage')) },
  audit: { label: 'Audit log', icon: IconListDetails, Page: lazy(() => import('./features/audit/AuditPage')) },
  network: { label: 'Network', icon: IconNetwork, Page: lazy(() => import('./features/network/NetworkPage')) },
  // Backups (feature folder renderer/src/features/backup; issue 12a).
  backup: { label: 'Backups', icon: IconDatabaseExport, Page: lazy(() => import('./features/backup/BackupPage')) },
  'api-keys': { label: 'API keys', icon: IconKey, Page: lazy(() => import('./features/api-key/ApiKeys')) },
  'signing-keys': { label: 'Signing keys', icon: IconCertificate, Page: lazy(() => import('./features/jwt/SigningKeys')) },
  sso: { label: 'Single sign-on', icon: IconShieldLock, Page: lazy(() => import('./features/oidc-provider/OidcClients')) },
  'protected-apps': { label: 'Protected apps', icon: IconShieldLock, Page: lazy(() => import('./features/forward-auth/ProtectedApps')) },
  settings: { label: 'Settings', icon: IconSettings, Page: lazy(() => import('./features/settings/SettingsPage')) },
} satisfies Record<string, { label: string; icon: ComponentType<{ size?: number }>; Page: ComponentType }>

export type ViewName = keyof typeof views

/** Old addresses that still open the right view. */
const MOVED: Record<string, ViewName> = { security: 'settings' }

const viewFromHash = (): ViewName => {
  // `#/users/<id>`: the view is the first segment, the rest a drawer's deep link (deep-link.ts).
  const raw = (window.location.hash.replace(/^#\/?/, '').split('?')[0] ?? '').split('/')[0] ?? ''
  const name = MOVED[raw] ?? raw
  return name in views ? (name as ViewName) : 'overview'
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
  return (
    <PanelGate>
      <Shell />
    </PanelGate>
  )
}

function Shell() {
  const view = useHashView()
  const [opened, { toggle, close }] = useDisclosure()
  const { Page } = views[view]
  useEffect(() => {
    document.title = `${views[view].label} · Gatehouse`
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
            <CallerBadge />
            <ColorSchemeToggle />
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs">
        <ScrollArea>
          {(Object.keys(views) as ViewName[]).map((name) => {
            const { label, icon: Icon } = views[name]
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
        <ViewLoadBoundary view={view}>
          <Suspense fallback={<Loading />}>
            <Page />
          </Suspense>
        </ViewLoadBoundary>
      </AppShell.Main>
    </AppShell>
  )
}
