/**
 * Text colours that keep WCAG AA contrast (4.5:1) in both colour schemes: a dark shade on the light
 * scheme, a light one on the dark scheme (main.tsx's CSS variables resolver defines them). For
 * text and outline badges; filled badges keep their palette colour with white text.
 */
export const ink = {
  ok: 'var(--gh-ink-ok)',
  info: 'var(--gh-ink-info)',
  muted: 'var(--gh-ink-muted)',
  danger: 'var(--gh-ink-danger)',
  accent: 'var(--gh-ink-accent)',
  special: 'var(--gh-ink-special)',
} as const

/** The resolver's values: light scheme, dark scheme. */
export const INK_VARIABLES = {
  light: {
    '--gh-ink-ok': 'var(--mantine-color-teal-9)',
    '--gh-ink-info': 'var(--mantine-color-blue-9)',
    '--gh-ink-muted': 'var(--mantine-color-gray-8)',
    '--gh-ink-danger': 'var(--mantine-color-red-9)',
    '--gh-ink-accent': 'var(--mantine-color-indigo-9)',
    '--gh-ink-special': 'var(--mantine-color-grape-9)',
  },
  dark: {
    '--gh-ink-ok': 'var(--mantine-color-teal-3)',
    '--gh-ink-info': 'var(--mantine-color-blue-3)',
    '--gh-ink-muted': 'var(--mantine-color-dark-0)',
    '--gh-ink-danger': 'var(--mantine-color-red-3)',
    '--gh-ink-accent': 'var(--mantine-color-indigo-3)',
    '--gh-ink-special': 'var(--mantine-color-grape-3)',
  },
}
