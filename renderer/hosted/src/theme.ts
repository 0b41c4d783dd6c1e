import { Anchor, colorsTuple, createTheme, type CSSVariablesResolver, type MantineThemeOverride } from '@mantine/core'

/** WCAG relative luminance of `#rgb` / `#rrggbb`. */
export function luminance(hex: string): number {
  const h = hex.replace('#', '')
  const full = h.length === 3 ? [...h].map((c) => c + c).join('') : h
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = Number.parseInt(full.slice(i, i + 2), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }) as [number, number, number]
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

export const contrast = (a: string, b: string): number => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number]
  return (hi + 0.05) / (lo + 0.05)
}

const FALLBACK = '#1c64d8'
/** The colours the pages' light badges use (verified, unverified, failed). */
const STATUS_COLORS = ['teal', 'orange', 'red'] as const
/** Mantine's dark body colour (dark 7), the card's background in the dark scheme. */
const DARK_BODY = '#242424'
const validColor = (c: string) => (/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(c) ? c : FALLBACK)

/**
 * The configured colour as Mantine's primary colour. Button text is black or white, whichever
 * contrasts more (autoContrast). Links use the colour only when it reads at 4.5:1 on white (on
 * the dark card in the dark scheme); otherwise a dark (light) grey, so any colour an administrator
 * picks stays accessible in both schemes.
 */
export function themeFor(color: string): { theme: MantineThemeOverride; resolver: CSSVariablesResolver } {
  const brand = validColor(color)
  const linkColor = contrast(brand, '#ffffff') >= 4.5 ? brand : '#343a40'
  // The dark scheme's card is Mantine's dark body (dark 7): the colour where it reads there, else a light grey.
  const darkLinkColor = contrast(brand, DARK_BODY) >= 4.5 ? brand : '#dee2e6'
  const theme = createTheme({
    colors: { brand: colorsTuple(brand) },
    primaryColor: 'brand',
    primaryShade: 6,
    autoContrast: true,
    // Black text above this luminance, white below: 0.179 is where both contrast equally (WCAG).
    luminanceThreshold: 0.179,
    defaultRadius: 'md',
    fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
    components: {
      // Links inside sentences are told apart by more than colour (WCAG 1.4.1).
      Anchor: Anchor.extend({ defaultProps: { underline: 'always' } }),
    },
  })
  const resolver: CSSVariablesResolver = () => ({
    variables: {},
    light: {
      '--gh-page-bg': 'var(--mantine-color-gray-0)',
      '--mantine-color-anchor': linkColor,
      // Mantine's "dimmed" (gray 6) is 3.3:1 on white; gray 7 passes AA.
      '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
      '--mantine-color-placeholder': 'var(--mantine-color-gray-7)',
      // Field errors: red 6 is 3.3:1 on white; red 9 passes AA for the message and the typed text.
      '--mantine-color-error': 'var(--mantine-color-red-9)',
      // Outline buttons that remove or sign out: red 9 (red 6 is 3.3:1 on white); the dark scheme's red 4 passes.
      '--mantine-color-red-outline': 'var(--mantine-color-red-9)',
      // Light badges (verified, unverified, failed): shade 9 on shade 0 (orange 9 is under 4.5:1
      // there: black). In the dark scheme Mantine's own light colours (a light shade on a dark tint) pass.
      ...Object.fromEntries(
        STATUS_COLORS.flatMap((c) => [
          [`--mantine-color-${c}-light`, `var(--mantine-color-${c}-0)`],
          [`--mantine-color-${c}-light-color`, c === 'orange' ? 'var(--mantine-color-black)' : `var(--mantine-color-${c}-9)`],
        ]),
      ),
    },
    // prefers-color-scheme: dark (main.tsx: defaultColorScheme "auto"). Mantine's dark body (dark 7)
    // for the card on a darker page; every text colour at 4.5:1 or more on both.
    dark: {
      '--gh-page-bg': 'var(--mantine-color-dark-8)',
      '--mantine-color-anchor': darkLinkColor,
      // Mantine's dark "dimmed" (dark 2) is 4.1:1 on dark 7; dark 1 passes AA.
      '--mantine-color-dimmed': 'var(--mantine-color-dark-1)',
      '--mantine-color-placeholder': 'var(--mantine-color-dark-1)',
      '--mantine-color-error': 'var(--mantine-color-red-4)',
      // A light button of the configured colour reads as the links do on the dark card.
      '--mantine-color-brand-light-color': darkLinkColor,
    },
  })
  return { theme, resolver }
}
