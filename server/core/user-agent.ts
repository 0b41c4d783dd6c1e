/**
 * A device in words from its User-Agent header ("Firefox on Windows", "Safari on iPhone",
 * "curl"): the browsers and systems people use, in the order their tokens must be tested (Edge
 * and Opera say "Chrome" too, Chrome says "Safari", Android says "Linux"). Nothing recognised:
 * "Unknown device". Small on purpose: the Sessions page needs a name a person recognises, not a
 * full parser. One rule for the account center's pages (renderer/hosted re-exports it) and the
 * account feature's sign-in notices (a new device is a browser on a system not seen before).
 */
const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\/[\d.]+/, 'Edge'],
  [/\b(?:OPR|Opera)\/[\d.]+/, 'Opera'],
  [/\bSamsungBrowser\/[\d.]+/, 'Samsung Internet'],
  [/\bVivaldi\/[\d.]+/, 'Vivaldi'],
  [/\b(?:Firefox|FxiOS)\/[\d.]+/, 'Firefox'],
  [/\b(?:HeadlessChrome)\/[\d.]+/, 'Headless Chrome'],
  [/\b(?:Chrome|CriOS|Chromium)\/[\d.]+/, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\/[\d.]+/, 'Safari'],
  [/\bElectron\/[\d.]+/, 'Electron app'],
  [/^curl\/[\d.]+/, 'curl'],
  [/^Wget\/[\d.]+/, 'Wget'],
  [/^(?:node-fetch|undici|node)\b/i, 'Node.js app'],
  [/^python-requests\/[\d.]+/, 'Python app'],
  [/^okhttp\/[\d.]+/, 'Android app'],
]

const SYSTEMS: Array<[RegExp, string]> = [
  [/\biPhone\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
]

export function deviceOf(userAgent: string | null | undefined): string {
  const ua = (userAgent ?? '').trim()
  if (!ua) return 'Unknown device'
  const browser = BROWSERS.find(([re]) => re.test(ua))?.[1]
  const system = SYSTEMS.find(([re]) => re.test(ua))?.[1]
  if (browser && system) return `${browser} on ${system}`
  return browser ?? system ?? 'Unknown device'
}
