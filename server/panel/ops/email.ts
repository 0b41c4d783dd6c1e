import type { HandlerGroup } from '../service.js'
import { notAvailable } from '../service.js'

const unavailable = () => {
  throw notAvailable('Email delivery')
}

export const emailHandlers: HandlerGroup<
  'email.get' | 'email.update' | 'email.sendTest' | 'email.preview' | 'email.outbox' | 'email.retry'
> = () => ({
  'email.get': unavailable,
  'email.update': unavailable,
  'email.sendTest': unavailable,
  'email.preview': unavailable,
  'email.outbox': unavailable,
  'email.retry': unavailable,
})
