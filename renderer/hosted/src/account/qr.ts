import { encode } from 'uqr'

/**
 * A QR code drawn here, from the text alone (no third-party service sees the secret): the SVG path
 * of its dark modules, one unit each, and the size of its square. Error correction M (15 %), as
 * authenticator apps expect of an otpauth:// link.
 */
export function qrPath(text: string): { d: string; size: number } {
  const { data, size } = encode(text, { ecc: 'M', border: 0 })
  const parts: string[] = []
  for (let y = 0; y < size; y++) {
    const row = data[y] ?? []
    // Runs of dark modules on a row become one rectangle each.
    for (let x = 0; x < size; x++) {
      if (!row[x]) continue
      let end = x
      while (end + 1 < size && row[end + 1]) end++
      parts.push(`M${x} ${y}h${end - x + 1}v1h-${end - x + 1}z`)
      x = end
    }
  }
  return { d: parts.join(''), size }
}

/** The secret of an otpauth:// link, for typing into an app that cannot scan. */
export const secretOf = (uri: string): string => {
  try {
    return new URL(uri).searchParams.get('secret') ?? ''
  } catch {
    return ''
  }
}
