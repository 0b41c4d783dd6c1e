/** A Prometheus text scrape read into samples, for tests that assert how counters moved. */
export interface Scrape {
  text: string
  /** The sum of every sample of `name` whose labels include `labels` (0 when none). */
  value(name: string, labels?: Record<string, string>): number
  /** Whether any sample of `name` has labels including `labels` (a series shown at 0 counts). */
  has(name: string, labels?: Record<string, string>): boolean
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

export function parseScrape(text: string): Scrape {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = []
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const match = LINE.exec(line)
    if (!match) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const l of (match[2] ?? '').matchAll(LABEL)) labels[l[1] as string] = l[2] as string
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) })
  }
  const matching = (name: string, want: Record<string, string>) =>
    samples.filter((s) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v))
  return {
    text,
    value: (name, want = {}) => matching(name, want).reduce((sum, s) => sum + s.value, 0),
    has: (name, want = {}) => matching(name, want).length > 0,
  }
}

export async function scrape(metricsURL: string): Promise<Scrape> {
  const res = await fetch(metricsURL)
  if (res.status !== 200) throw new Error(`scrape answered ${res.status}`)
  return parseScrape(await res.text())
}
