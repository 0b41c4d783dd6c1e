import '@mantine/core/styles.css'
import '@mantine/notifications/styles.css'
import '@mantine/charts/styles.css'
import '@mantine/dates/styles.css'
import './panel.css'
import { Anchor, createTheme, Drawer, Modal, type CSSVariablesResolver, MantineProvider, Notification, Pagination } from '@mantine/core'
import { Notifications } from '@mantine/notifications'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './App'
import { INK_VARIABLES } from './ink'

const PAGER_CONTROLS: Record<string, string> = { first: 'First page', previous: 'Previous page', next: 'Next page', last: 'Last page' }

const theme = createTheme({
  primaryColor: 'indigo',
  // Shade 7 keeps white text on primary buttons and primary links on white above 4.5:1 (shade 6: 4.3:1).
  primaryShade: { light: 7, dark: 8 },
  components: {
    // Links inside sentences are told apart by more than colour (WCAG 1.4.1).
    Anchor: Anchor.extend({ defaultProps: { underline: 'always' } }),
    // The close buttons of dialogs are icons: give them a name.
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
    // Escape closes a drawer in App.tsx's handler, after any dialog opened from it had the key (see closeDrawerOnEscape).
    Drawer: Drawer.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' }, closeOnEscape: false } }),
    // Toasts: a named close button, and their text in the body colour (Mantine's dimmed grey on
    // the toast's white reads below 4.5:1).
    Notification: Notification.extend({
      defaultProps: { closeButtonProps: { 'aria-label': 'Close notification' } },
      styles: { description: { color: 'var(--mantine-color-text)' } },
    }),
    // Pager buttons are numbers and arrows: name each (WCAG 4.1.2).
    Pagination: Pagination.extend({
      defaultProps: {
        getItemProps: (page: number) => ({ 'aria-label': `Page ${page}` }),
        getControlProps: (control: string) => ({ 'aria-label': PAGER_CONTROLS[control] ?? control }),
      },
    }),
  },
  defaultRadius: 'md',
  fontFamily: 'Inter, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
})

/**
 * WCAG AA contrast (4.5:1) for secondary text: Mantine's "dimmed" is gray 6 (3.3:1 on white) in
 * the light scheme; gray 7 reads as secondary and passes. Placeholders likewise (the date
 * pickers draw theirs as text).
 */
const RED_FILLED = { '--mantine-color-red-filled': 'var(--mantine-color-red-9)', '--mantine-color-red-filled-hover': '#a51f1f' }

const resolver: CSSVariablesResolver = () => ({
  variables: {},
  // White on red 7/8 (the filled shade of either scheme) reads at 3.8-4.4:1: red buttons use red 9.
  // Field errors: Mantine's red 6 (light) reads at 3.3:1 on white and red 8 (dark) at 3.4:1 on dark 7.
  light: {
    ...RED_FILLED,
    '--mantine-color-error': 'var(--mantine-color-red-9)',
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    '--mantine-color-placeholder': 'var(--mantine-color-gray-7)',
    // A teal light badge (a signing key, a verified address) under a hovered or selected row sits on
    // teal 1, where teal 9 reads at 4.3:1: a darker teal passes there too.
    '--mantine-color-teal-light-color': '#066649',
    // An orange light badge (a self-registered OIDC client) reads at 3.6:1 in orange 9: a darker orange passes (5.5:1).
    '--mantine-color-orange-light-color': '#a63a0c',
    ...INK_VARIABLES.light,
  },
  // The dark scheme's "dimmed" (dark 2) and placeholders (dark 3) read at 3.5:1 and 2.5:1 on cards: dark 1 passes.
  dark: {
    ...RED_FILLED,
    '--mantine-color-error': 'var(--mantine-color-red-4)',
    '--mantine-color-dimmed': 'var(--mantine-color-dark-1)',
    '--mantine-color-placeholder': 'var(--mantine-color-dark-1)',
    ...INK_VARIABLES.dark,
  },
})

const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: true, staleTime: 5_000 } },
})

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="auto" cssVariablesResolver={resolver}>
      <QueryClientProvider client={queryClient}>
        {/*
          Bottom left: drawers open on the right with their close button at the top and their
          Save at the bottom right; a toast there never covers either (tests/features/generic-oauth/generic-oauth-panel.panel.test.ts).
        */}
        <Notifications position="bottom-left" />
        <App />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
)
