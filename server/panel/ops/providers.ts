import type { HandlerGroup } from '../service.js'
import { notAvailable } from '../service.js'

const unavailable = () => {
  throw notAvailable('Social providers')
}

export const providerHandlers: HandlerGroup<'providers.list' | 'providers.update'> = () => ({
  'providers.list': unavailable,
  'providers.update': unavailable,
})
