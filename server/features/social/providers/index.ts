import type { ProviderId } from '../options.js'
import type { ProviderDefinition } from '../types.js'
import { apple } from './apple.js'
import { discord } from './discord.js'
import { dropbox } from './dropbox.js'
import { facebook } from './facebook.js'
import { github } from './github.js'
import { gitlab } from './gitlab.js'
import { google } from './google.js'
import { kick } from './kick.js'
import { linkedin } from './linkedin.js'
import { microsoft } from './microsoft.js'
import { reddit } from './reddit.js'
import { roblox } from './roblox.js'
import { spotify } from './spotify.js'
import { tiktok } from './tiktok.js'
import { twitch } from './twitch.js'
import { twitter } from './twitter.js'
import { vk } from './vk.js'
import { zoom } from './zoom.js'

/** The 18 providers of SPEC §1, by id. */
export const providers: { [P in ProviderId]: ProviderDefinition<P> } = {
  apple,
  discord,
  facebook,
  github,
  microsoft,
  google,
  spotify,
  twitch,
  twitter,
  dropbox,
  kick,
  linkedin,
  gitlab,
  tiktok,
  reddit,
  roblox,
  vk,
  zoom,
}
