import { useCallback, useEffect, useState } from 'react'

/**
 * Drawers as deep links (issue 31 §3): `#/<view>/<id>` opens the view with that item's drawer, so
 * a user, an organization or a client has a URL of its own, and a reload opens the same drawer.
 * Returns the id in the address (or null), and functions that open and close it.
 */
export function useDeepLink(view: string): [string | null, (id: string) => void, () => void] {
  const read = useCallback((): string | null => {
    const path = (window.location.hash.replace(/^#\/?/, '').split('?')[0] ?? '').split('/')
    if (path[0] !== view || !path[1]) return null
    try {
      return decodeURIComponent(path[1])
    } catch {
      return null
    }
  }, [view])
  const [id, setId] = useState<string | null>(read)
  useEffect(() => {
    const update = () => setId(read())
    window.addEventListener('hashchange', update)
    return () => window.removeEventListener('hashchange', update)
  }, [read])
  const open = useCallback(
    (next: string) => {
      window.location.hash = `#/${view}/${encodeURIComponent(next)}`
    },
    [view],
  )
  const close = useCallback(() => {
    if (read() !== null) window.location.hash = `#/${view}`
  }, [view, read])
  return [id, open, close]
}

/** Props that make a table row open its item from the keyboard too (focusable; Enter or Space), as a click does. */
export function rowOpener(label: string, onOpen: () => void) {
  return {
    tabIndex: 0,
    'aria-label': label,
    style: { cursor: 'pointer' },
    onClick: onOpen,
    onKeyDown: (e: React.KeyboardEvent<HTMLElement>) => {
      // Only the row itself: a checkbox or button inside it keeps its own keys.
      if (e.target !== e.currentTarget) return
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault()
        onOpen()
      }
    },
  }
}
