import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { createElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'
import { describe, expect, it } from 'vitest'
import { Ago, axisLabel, count, DATE_PICKER_FORMAT, dateTime, epochOf, fromNow, isoTime } from '../../renderer/src/format.js'

/**
 * Issue 31: one date format everywhere in the panel. renderer/src/format.tsx writes every date and
 * time; no other renderer file formats one itself, so a view added later cannot bring its own.
 */

// 2026-11-25 14:03:07 in the machine's time zone (the panel shows the browser's local time).
const local = new Date(2026, 10, 25, 14, 3, 7).getTime()

describe('the panel formatter', () => {
  it('writes absolute times one way, from epoch ms, ISO strings and Dates; nothing as a dash', () => {
    expect(dateTime(local)).toBe('2026-11-25 14:03:07')
    expect(dateTime(new Date(local))).toBe('2026-11-25 14:03:07')
    expect(dateTime(new Date(local).toISOString())).toBe('2026-11-25 14:03:07')
    expect(dateTime(null)).toBe('—')
    expect(dateTime(undefined)).toBe('—')
    expect(dateTime('not a date')).toBe('—')
    expect(DATE_PICKER_FORMAT).toBe('YYYY-MM-DD HH:mm')
    expect(epochOf(new Date(local))).toBe(local)
  })

  it('writes chart axes and counts the same in every browser language', () => {
    expect(axisLabel(local, 'hour')).toBe('14:00')
    expect(axisLabel(local, 'day')).toBe('11-25')
    expect(count(0)).toBe('0')
    expect(count(999)).toBe('999')
    expect(count(1234567)).toBe('1,234,567')
    expect(count(-12345)).toBe('-12,345')
  })

  it('shows relative times with the absolute one as their title', () => {
    const then = Date.now() - 3 * 60_000
    expect(fromNow(then)).toBe('3 minutes ago')
    const html = renderToStaticMarkup(createElement(Ago, { when: then }))
    expect(html).toBe(`<time dateTime="${isoTime(then)}" title="${dateTime(then)}" data-absolute="${dateTime(then)}">3 minutes ago</time>`)
    expect(renderToStaticMarkup(createElement(Ago, { when: null, none: 'never' }))).toBe('never')
    expect(renderToStaticMarkup(createElement(Ago, { when: Date.now() + 2 * 86_400_000 + 60_000, prefix: 'expires ' }))).toContain(
      '>expires in 2 days</time>',
    )
  })
})

describe('no other renderer file formats a date itself', () => {
  const root = join(import.meta.dirname, '../../renderer/src')
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name)
      return statSync(path).isDirectory() ? files(path) : /\.(ts|tsx)$/.test(name) ? [path] : []
    })
  // Locale-dependent formatting, the Intl formatters, and dayjs (which format.tsx wraps).
  const FORBIDDEN = [
    /\.toLocale(Date|Time)?String\s*\(/,
    /\bIntl\s*\.\s*(DateTimeFormat|RelativeTimeFormat|NumberFormat)\b/,
    /\.to(UTC|Date|Time|GMT)String\s*\(/,
    /from\s+['"]dayjs(\/[^'"]*)?['"]/,
    /\bdayjs\s*\(/,
  ]

  it('only renderer/src/format.tsx calls toLocale*String, Intl.DateTimeFormat or dayjs', () => {
    const offenders: string[] = []
    for (const file of files(root)) {
      const name = relative(root, file)
      if (name === 'format.tsx') continue
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (FORBIDDEN.some((rule) => rule.test(line))) offenders.push(`${name}:${i + 1}: ${line.trim()}`)
        })
    }
    expect(offenders).toEqual([])
  })

  it('the check sees what it forbids', () => {
    const sample = ['x.toLocaleString()', 'd.toLocaleDateString("en")', 'new Intl.DateTimeFormat()', "import dayjs from 'dayjs'"]
    expect(sample.map((line) => FORBIDDEN.some((rule) => rule.test(line)))).toEqual([true, true, true, true])
  })
})
