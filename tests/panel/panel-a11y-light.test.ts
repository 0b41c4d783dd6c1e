import { a11ySuite } from './a11y.js'

/** Issue 31 §4 in the light colour scheme: every view, settings section, drawer and dialog (tests/panel/a11y.ts). */
a11ySuite('light')
