import dayjs from 'dayjs'
import relativeTime from 'dayjs/plugin/relativeTime'

/**
 * Every date, time, duration and count the panel shows is written here, once (issue 31: one date
 * format everywhere). Absolute times read `2026-11-25 14:03:07` in the browser's time zone, the
 * same whatever the browser's language; relative ones ("3 minutes ago") go through <Ago>, which
 * carries the absolute time as its title. tests/unit/panel-format.test.ts checks the formats and
 * that no other renderer file formats a date (toLocale*String, Intl.DateTimeFormat, dayjs) itself.
 */

dayjs.extend(relativeTime)

/** The one absolute format. */
export const DATE_TIME_FORMAT = 'YYYY-MM-DD HH:mm:ss'
/** Date pickers (the Audit view's from/to): the same order, to the minute. */
export const DATE_PICKER_FORMAT = 'YYYY-MM-DD HH:mm'

type When = number | string | Date | null | undefined

const valid = (when: When): dayjs.Dayjs | null => {
  if (when === null || when === undefined || when === '' || when === 0) return null
  const d = dayjs(when)
  return d.isValid() ? d : null
}

/** An absolute time (epoch ms, ISO string or Date) as `YYYY-MM-DD HH:mm:ss`; '—' for none. */
export const dateTime = (when: When): string => valid(when)?.format(DATE_TIME_FORMAT) ?? '—'

/** A time relative to now ("3 minutes ago", "in 2 days"); '—' for none. Shown through <Ago> with the absolute time. */
export const fromNow = (when: When): string => valid(when)?.fromNow() ?? '—'

/** The `<time datetime>` value (ISO 8601). */
export const isoTime = (when: When): string | undefined => valid(when)?.toISOString()

/** A chart's time axis: the hour (`14:00`) or the day (`11-25`) a bucket starts. */
export const axisLabel = (when: When, unit: 'hour' | 'day'): string => valid(when)?.format(unit === 'hour' ? 'HH:00' : 'MM-DD') ?? ''

/** A picker's Date (or its string) as epoch ms. */
export const epochOf = (when: Date | string): number => dayjs(when).valueOf()

/** A relative time, with the absolute one as its title (hover) and machine-readable datetime. */
export function Ago({ when, none = '—', prefix = '' }: { when: When; none?: string; prefix?: string }) {
  const iso = isoTime(when)
  if (!iso) return <>{none}</>
  return (
    <time dateTime={iso} title={dateTime(when)} data-absolute={dateTime(when)}>
      {prefix}
      {fromNow(when)}
    </time>
  )
}

/** A count with thousands grouped the same way in every browser (12,345). */
export const count = (n: number): string => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB']
  let value = n / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}

export function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400)
  const h = Math.floor((seconds % 86400) / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  if (d > 0) return `${d}d ${h}h`
  if (h > 0) return `${h}h ${m}m`
  if (m > 0) return `${m}m ${seconds % 60}s`
  return `${seconds}s`
}
