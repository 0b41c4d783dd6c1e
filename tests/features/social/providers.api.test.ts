import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { account, user } from '../../../server/db/schema.js'
import { resolveBuiltInProvider } from '../../../server/features/social/flow.js'
import { PROVIDER_IDS, type ProviderId } from '../../../server/features/social/options.js'
import {
  Browser,
  basicCredentials,
  FakeProvider,
  type FakeAnswer,
  type RecordedRequest,
  s256,
  unsignedJwt,
} from '../../helpers/oauth-fakes.js'
import { signUp } from '../../helpers/http.js'
import { startTestServer, type TestServer } from '../../helpers/server.js'
import { firstRow } from '../../../server/db/storage.js'

/**
 * Each of the 18 providers against a loopback fake answering its token and profile endpoints
 * with the provider's documented response shapes. The whole callback runs; the mapped user and
 * the account are read back.
 */
let server: TestServer
const fake = new FakeProvider()
const CLIENT_ID = 'client-id-123'
const CLIENT_SECRET = 'client-secret-456'
const ACCESS = 'provider-access-token'

const now = () => Math.floor(server.clock.now() / 1000)
const bearer = (req: RecordedRequest) => req.headers.authorization === `Bearer ${ACCESS}`
const json = (body: unknown): FakeAnswer => ({ json: body })
const unauthorized: FakeAnswer = { status: 401, json: { error: 'invalid_token' } }
/** A profile endpoint that insists on the bearer token. */
const guarded = (body: () => unknown) => (req: RecordedRequest) => (bearer(req) ? json(body()) : unauthorized)
/**
 * What fake handlers found wrong in the requests they got. A handler never calls `expect` (a
 * throw there would become an anonymous 500 at the server); it answers 400 and records why, and
 * the test asserts the list is empty.
 */
const handlerProblems: string[] = []
const refuse = (why: string): FakeAnswer => {
  handlerProblems.push(why)
  return { status: 400, json: { error: 'invalid_request', error_description: why } }
}

type Auth = 'post' | 'basic' | 'tiktok'

interface Case {
  id: ProviderId
  auth: Auth
  pkce: boolean
  /** Endpoint names → fake paths (the token endpoint is always /<id>/token). */
  endpoints: Record<string, string>
  options?: Record<string, unknown>
  token: () => Record<string, unknown>
  routes: (f: FakeProvider) => void
  callbackExtra?: Record<string, string>
  authorizationChecks?: (url: URL) => void
  expected: { accountId: string; name: string; email: string; image: string | null; emailVerified: boolean; scope: string | null }
}

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46])

const cases: Case[] = [
  {
    id: 'apple',
    auth: 'post',
    pkce: true,
    endpoints: { jwks: '/apple/auth/keys' },
    token: () => ({
      access_token: ACCESS,
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: 'r.apple',
      id_token: unsignedJwt({
        iss: 'https://appleid.apple.com',
        aud: CLIENT_ID,
        exp: now() + 600,
        iat: now(),
        sub: '001234.5678abcdef.0999',
        email: 'ada@privaterelay.appleid.com',
        email_verified: 'true',
        is_private_email: 'true',
        auth_time: now(),
      }),
    }),
    routes: () => {},
    callbackExtra: { user: JSON.stringify({ name: { firstName: 'Ada', lastName: 'Lovelace' }, email: 'ada@privaterelay.appleid.com' }) },
    authorizationChecks: (url) => {
      expect(url.searchParams.get('response_type')).toBe('code id_token')
      expect(url.searchParams.get('response_mode')).toBe('form_post')
      expect(url.searchParams.get('scope')).toBe('email name')
    },
    expected: {
      accountId: '001234.5678abcdef.0999',
      name: 'Ada Lovelace',
      email: 'ada@privaterelay.appleid.com',
      image: null,
      emailVerified: true,
      scope: null,
    },
  },
  {
    id: 'discord',
    auth: 'post',
    pkce: false,
    endpoints: { userInfo: '/discord/users/@me' },
    token: () => ({ access_token: ACCESS, token_type: 'Bearer', expires_in: 604800, refresh_token: 'r.discord', scope: 'identify email' }),
    routes: (f) =>
      f.on(
        'GET',
        '/discord/users/@me',
        guarded(() => ({
          id: '80351110224678912',
          username: 'nelly',
          discriminator: '0',
          global_name: 'Nelly',
          avatar: '8342729096ea3675442027381ff50dfe',
          verified: true,
          email: 'nelly@discord.com',
          flags: 64,
          banner: null,
          accent_color: 16711680,
          premium_type: 1,
          public_flags: 64,
        })),
      ),
    authorizationChecks: (url) => {
      expect(url.searchParams.get('prompt')).toBe('none')
      expect(url.searchParams.get('scope')).toBe('identify email')
    },
    expected: {
      accountId: '80351110224678912',
      name: 'Nelly',
      email: 'nelly@discord.com',
      image: 'https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png',
      emailVerified: true,
      scope: 'identify,email',
    },
  },
  {
    id: 'facebook',
    auth: 'post',
    pkce: false,
    endpoints: { userInfo: '/facebook/me' },
    token: () => ({ access_token: ACCESS, token_type: 'bearer', expires_in: 5183944 }),
    routes: (f) =>
      f.on('GET', '/facebook/me', (req) => {
        // A wrong request is answered 400 and recorded; the test reports it by name.
        if (req.query.get('fields') !== 'id,name,email,picture') return refuse(`facebook fields ${req.query.get('fields')}`)
        return guarded(() => ({
          id: '10158000000000001',
          name: 'Fay Cebook',
          email: 'fay@example.com',
          picture: {
            data: { height: 50, is_silhouette: false, url: 'https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=1', width: 50 },
          },
        }))(req)
      }),
    expected: {
      accountId: '10158000000000001',
      name: 'Fay Cebook',
      email: 'fay@example.com',
      image: 'https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=1',
      emailVerified: false,
      scope: null,
    },
  },
  {
    id: 'github',
    auth: 'post',
    pkce: true,
    endpoints: { userInfo: '/github/user', emails: '/github/user/emails' },
    token: () => ({ access_token: ACCESS, token_type: 'bearer', scope: 'read:user,user:email' }),
    routes: (f) => {
      f.on(
        'GET',
        '/github/user',
        guarded(() => ({
          login: 'octocat',
          id: 583231,
          avatar_url: 'https://avatars.githubusercontent.com/u/583231?v=4',
          name: 'The Octocat',
          email: null,
          type: 'User',
        })),
      )
      f.on(
        'GET',
        '/github/user/emails',
        guarded(() => [
          { email: 'octocat-old@example.com', verified: false, primary: false, visibility: null },
          { email: 'octocat@github.com', verified: true, primary: true, visibility: 'public' },
        ]),
      )
    },
    expected: {
      accountId: '583231',
      name: 'The Octocat',
      email: 'octocat@github.com',
      image: 'https://avatars.githubusercontent.com/u/583231?v=4',
      emailVerified: true,
      scope: 'read:user,user:email',
    },
  },
  {
    id: 'microsoft',
    auth: 'post',
    pkce: true,
    endpoints: { photo: '/microsoft/v1.0/me/photos/48x48/$value' },
    token: () => ({
      token_type: 'Bearer',
      scope: 'openid profile email User.Read',
      expires_in: 3599,
      ext_expires_in: 3599,
      access_token: ACCESS,
      refresh_token: 'r.microsoft',
      id_token: unsignedJwt({
        aud: CLIENT_ID,
        iss: 'https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0',
        iat: now(),
        nbf: now(),
        exp: now() + 3600,
        name: 'Megan Bowen',
        oid: '00000000-0000-0000-66f3-3332eca7ea81',
        preferred_username: 'megan@contoso.com',
        email: 'megan@contoso.com',
        sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
        tid: '9188040d-6c67-4c5b-b112-36a304b66dad',
        xms_edov: true,
        ver: '2.0',
      }),
    }),
    routes: (f) =>
      f.on('GET', '/microsoft/v1.0/me/photos/48x48/$value', (req) =>
        bearer(req) ? { body: JPEG, headers: { 'content-type': 'image/jpeg' } } : unauthorized,
      ),
    expected: {
      accountId: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
      name: 'Megan Bowen',
      email: 'megan@contoso.com',
      image: `data:image/jpeg;base64,${JPEG.toString('base64')}`,
      emailVerified: true,
      scope: 'openid,profile,email,User.Read',
    },
  },
  {
    id: 'google',
    auth: 'post',
    pkce: true,
    endpoints: {},
    token: () => ({
      access_token: ACCESS,
      expires_in: 3599,
      scope: 'openid https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile',
      token_type: 'Bearer',
      id_token: unsignedJwt({
        iss: 'https://accounts.google.com',
        azp: CLIENT_ID,
        aud: CLIENT_ID,
        sub: '110169484474386276334',
        email: 'gina@gmail.com',
        email_verified: true,
        name: 'Gina Google',
        picture: 'https://lh3.googleusercontent.com/a/ACg8ocK',
        given_name: 'Gina',
        family_name: 'Google',
        iat: now(),
        exp: now() + 3600,
      }),
    }),
    routes: () => {},
    authorizationChecks: (url) => expect(url.searchParams.get('include_granted_scopes')).toBe('true'),
    expected: {
      accountId: '110169484474386276334',
      name: 'Gina Google',
      email: 'gina@gmail.com',
      image: 'https://lh3.googleusercontent.com/a/ACg8ocK',
      emailVerified: true,
      scope: 'openid,https://www.googleapis.com/auth/userinfo.email,https://www.googleapis.com/auth/userinfo.profile',
    },
  },
  {
    id: 'spotify',
    auth: 'post',
    pkce: true,
    endpoints: { userInfo: '/spotify/v1/me' },
    token: () => ({ access_token: ACCESS, token_type: 'Bearer', scope: 'user-read-email', expires_in: 3600, refresh_token: 'r.spotify' }),
    routes: (f) =>
      f.on(
        'GET',
        '/spotify/v1/me',
        guarded(() => ({
          country: 'SE',
          display_name: 'JM Wizzler',
          email: 'email@example.com',
          external_urls: { spotify: 'https://open.spotify.com/user/wizzler' },
          followers: { href: null, total: 3829 },
          href: 'https://api.spotify.com/v1/users/wizzler',
          id: 'wizzler',
          images: [{ url: 'https://i.scdn.co/image/ab6775700000ee85', height: 300, width: 300 }],
          product: 'premium',
          type: 'user',
          uri: 'spotify:user:wizzler',
        })),
      ),
    expected: {
      accountId: 'wizzler',
      name: 'JM Wizzler',
      email: 'email@example.com',
      image: 'https://i.scdn.co/image/ab6775700000ee85',
      emailVerified: false,
      scope: 'user-read-email',
    },
  },
  {
    id: 'twitch',
    auth: 'post',
    pkce: false,
    endpoints: {},
    token: () => ({
      access_token: ACCESS,
      expires_in: 14124,
      refresh_token: 'r.twitch',
      scope: ['openid', 'user:read:email'],
      token_type: 'bearer',
      id_token: unsignedJwt({
        aud: CLIENT_ID,
        exp: now() + 900,
        iat: now(),
        iss: 'https://id.twitch.tv/oauth2',
        sub: '713936733',
        azp: CLIENT_ID,
        preferred_username: 'TwitchDev',
        email: 'dev@twitch.tv',
        email_verified: true,
        picture: 'https://static-cdn.jtvnw.net/jtv_user_pictures/twitchdev-300x300.png',
      }),
    }),
    routes: () => {},
    authorizationChecks: (url) => expect(JSON.parse(url.searchParams.get('claims') ?? '{}')).toHaveProperty('id_token.email', null),
    expected: {
      accountId: '713936733',
      name: 'TwitchDev',
      email: 'dev@twitch.tv',
      image: 'https://static-cdn.jtvnw.net/jtv_user_pictures/twitchdev-300x300.png',
      emailVerified: true,
      scope: 'openid,user:read:email',
    },
  },
  {
    id: 'twitter',
    auth: 'basic',
    pkce: true,
    endpoints: { userInfo: '/twitter/2/users/me' },
    token: () => ({
      token_type: 'bearer',
      expires_in: 7200,
      access_token: ACCESS,
      scope: 'users.read tweet.read offline.access users.email',
      refresh_token: 'r.x',
    }),
    routes: (f) =>
      f.on('GET', '/twitter/2/users/me', (req) => {
        if (!bearer(req)) return unauthorized
        const data = { id: '2244994945', name: 'Developers', username: 'XDevelopers' }
        if (req.query.get('user.fields') === 'confirmed_email') return json({ data: { ...data, confirmed_email: 'devs@x.com' } })
        return json({ data: { ...data, profile_image_url: 'https://pbs.twimg.com/profile_images/1_normal.jpg' } })
      }),
    expected: {
      accountId: '2244994945',
      name: 'Developers',
      email: 'devs@x.com',
      image: 'https://pbs.twimg.com/profile_images/1_normal.jpg',
      emailVerified: true,
      scope: 'users.read,tweet.read,offline.access,users.email',
    },
  },
  {
    id: 'dropbox',
    auth: 'post',
    pkce: true,
    endpoints: { userInfo: '/dropbox/2/users/get_current_account' },
    token: () => ({
      access_token: ACCESS,
      expires_in: 14400,
      token_type: 'bearer',
      scope: 'account_info.read',
      account_id: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc',
      uid: '12345',
      refresh_token: 'r.dropbox',
    }),
    routes: (f) =>
      f.on(
        'POST',
        '/dropbox/2/users/get_current_account',
        guarded(() => ({
          account_id: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc',
          name: {
            given_name: 'Franz',
            surname: 'Ferdinand',
            familiar_name: 'Franz',
            display_name: 'Franz Ferdinand (Personal)',
            abbreviated_name: 'FF',
          },
          email: 'franz@dropbox.com',
          email_verified: true,
          disabled: false,
          locale: 'en',
          profile_photo_url: 'https://dl-web.dropbox.com/account_photo/get/dbaphid%3AAAH?size=128x128',
          account_type: { '.tag': 'basic' },
        })),
      ),
    expected: {
      accountId: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc',
      name: 'Franz Ferdinand (Personal)',
      email: 'franz@dropbox.com',
      image: 'https://dl-web.dropbox.com/account_photo/get/dbaphid%3AAAH?size=128x128',
      emailVerified: true,
      scope: 'account_info.read',
    },
  },
  {
    id: 'kick',
    auth: 'post',
    pkce: true,
    endpoints: { userInfo: '/kick/public/v1/users' },
    token: () => ({ access_token: ACCESS, token_type: 'Bearer', refresh_token: 'r.kick', expires_in: 3600, scope: 'user:read' }),
    routes: (f) =>
      f.on(
        'GET',
        '/kick/public/v1/users',
        guarded(() => ({
          data: [
            {
              email: 'streamer@kick.com',
              name: 'streamer',
              profile_picture: 'https://files.kick.com/images/user/1/profile_image.webp',
              user_id: 123456,
            },
          ],
          message: 'OK',
        })),
      ),
    expected: {
      accountId: '123456',
      name: 'streamer',
      email: 'streamer@kick.com',
      image: 'https://files.kick.com/images/user/1/profile_image.webp',
      emailVerified: false,
      scope: 'user:read',
    },
  },
  {
    id: 'linkedin',
    auth: 'post',
    pkce: false,
    endpoints: { userInfo: '/linkedin/v2/userinfo' },
    token: () => ({
      access_token: ACCESS,
      expires_in: 5183999,
      scope: 'email,openid,profile',
      token_type: 'Bearer',
      id_token: 'eyJ.linkedin.opaque',
    }),
    routes: (f) =>
      f.on(
        'GET',
        '/linkedin/v2/userinfo',
        guarded(() => ({
          sub: '782bbtaQ',
          name: 'John Doe',
          given_name: 'John',
          family_name: 'Doe',
          picture: 'https://media.licdn-ei.com/dms/image/C5F03AQHqK8v7tB1HCQ/profile-displayphoto-shrink_100_100/0/',
          locale: { country: 'US', language: 'en' },
          email: 'doe@email.com',
          email_verified: true,
        })),
      ),
    expected: {
      accountId: '782bbtaQ',
      name: 'John Doe',
      email: 'doe@email.com',
      image: 'https://media.licdn-ei.com/dms/image/C5F03AQHqK8v7tB1HCQ/profile-displayphoto-shrink_100_100/0/',
      emailVerified: true,
      scope: 'email,openid,profile',
    },
  },
  {
    id: 'gitlab',
    auth: 'post',
    pkce: true,
    endpoints: { userInfo: '/gitlab/api/v4/user' },
    token: () => ({
      access_token: ACCESS,
      token_type: 'Bearer',
      expires_in: 7200,
      refresh_token: 'r.gitlab',
      scope: 'read_user',
      created_at: 1607635748,
    }),
    routes: (f) =>
      f.on(
        'GET',
        '/gitlab/api/v4/user',
        guarded(() => gitlabUser),
      ),
    expected: {
      accountId: '1',
      name: 'John Smith',
      email: 'john@example.com',
      image: 'https://gitlab.example.com/uploads/user/avatar/1/cd8.jpeg',
      emailVerified: true,
      scope: 'read_user',
    },
  },
  {
    id: 'tiktok',
    auth: 'tiktok',
    pkce: false,
    endpoints: { userInfo: '/tiktok/v2/user/info/' },
    options: { clientKey: 'tiktok-client-key' },
    token: () => ({
      access_token: ACCESS,
      expires_in: 86400,
      open_id: '723f24d7-e717-40f8-a2b6-cb8464cd23b4',
      refresh_expires_in: 31536000,
      refresh_token: 'r.tiktok',
      scope: 'user.info.profile',
      token_type: 'Bearer',
    }),
    routes: (f) =>
      f.on('GET', '/tiktok/v2/user/info/', (req) => {
        if (req.query.get('fields') !== 'open_id,avatar_large_url,display_name,username')
          return refuse(`tiktok fields ${req.query.get('fields')}`)
        return guarded(() => ({
          data: {
            user: {
              open_id: '723f24d7-e717-40f8-a2b6-cb8464cd23b4',
              union_id: 'c9c60f44-a68e-4f5d-84dd-ce22faeb0ba1',
              avatar_large_url: 'https://p16-sign-va.tiktokcdn.com/large.jpeg',
              display_name: 'Tik Toker',
              username: 'tiktoker',
            },
          },
          error: { code: 'ok', message: '', log_id: '20220829194722CBE87ED59D524E01F9A6' },
        }))(req)
      }),
    authorizationChecks: (url) => {
      expect(url.searchParams.get('client_key')).toBe('tiktok-client-key')
      expect(url.searchParams.has('client_id')).toBe(false)
      expect(url.toString()).not.toContain(CLIENT_SECRET)
      expect(url.searchParams.get('scope')).toBe('user.info.profile')
    },
    expected: {
      accountId: '723f24d7-e717-40f8-a2b6-cb8464cd23b4',
      name: 'Tik Toker',
      email: '723f24d7-e717-40f8-a2b6-cb8464cd23b4@tiktok.placeholder.invalid',
      image: 'https://p16-sign-va.tiktokcdn.com/large.jpeg',
      emailVerified: false,
      scope: 'user.info.profile',
    },
  },
  {
    id: 'reddit',
    auth: 'basic',
    pkce: false,
    endpoints: { userInfo: '/reddit/api/v1/me' },
    options: { duration: 'permanent' },
    token: () => ({ access_token: ACCESS, token_type: 'bearer', expires_in: 86400, scope: 'identity', refresh_token: 'r.reddit' }),
    routes: (f) =>
      f.on(
        'GET',
        '/reddit/api/v1/me',
        guarded(() => ({
          id: 'abc12',
          name: 'spez',
          icon_img: 'https://styles.redditmedia.com/t5_1/styles/profileIcon_x.png?width=256&height=256&s=abc',
          has_verified_email: true,
          oauth_client_id: CLIENT_ID,
        })),
      ),
    authorizationChecks: (url) => expect(url.searchParams.get('duration')).toBe('permanent'),
    expected: {
      accountId: 'abc12',
      name: 'spez',
      email: 'abc12@reddit.placeholder.invalid',
      image: 'https://styles.redditmedia.com/t5_1/styles/profileIcon_x.png',
      emailVerified: false,
      scope: 'identity',
    },
  },
  {
    id: 'roblox',
    auth: 'post',
    pkce: false,
    endpoints: { userInfo: '/roblox/oauth/v1/userinfo' },
    token: () => ({ access_token: ACCESS, refresh_token: 'r.roblox', token_type: 'Bearer', expires_in: 899, scope: 'openid profile' }),
    routes: (f) =>
      f.on(
        'GET',
        '/roblox/oauth/v1/userinfo',
        guarded(() => ({
          sub: '1516563360',
          name: 'exampleuser',
          nickname: 'Example User',
          preferred_username: 'exampleuser',
          created_at: 1584682495,
          profile: 'https://www.roblox.com/users/1516563360/profile',
          picture: 'https://tr.rbxcdn.com/30DAY-AvatarHeadshot/150/150/AvatarHeadshot/Webp/noFilter',
        })),
      ),
    authorizationChecks: (url) => expect(url.searchParams.get('prompt')).toBe('select_account consent'),
    expected: {
      accountId: '1516563360',
      name: 'Example User',
      email: '1516563360@roblox.placeholder.invalid',
      image: 'https://tr.rbxcdn.com/30DAY-AvatarHeadshot/150/150/AvatarHeadshot/Webp/noFilter',
      emailVerified: false,
      scope: 'openid,profile',
    },
  },
  {
    id: 'vk',
    auth: 'post',
    pkce: true,
    endpoints: { userInfo: '/vk/oauth2/user_info' },
    callbackExtra: { device_id: 'device-42', type: 'code_v2', expires_in: '600' },
    token: () => ({
      refresh_token: 'r.vk',
      access_token: ACCESS,
      id_token: 'vk.id.token',
      token_type: 'Bearer',
      expires_in: 3600,
      user_id: 1234567890,
      scope: 'email phone',
    }),
    routes: (f) =>
      f.on('POST', '/vk/oauth2/user_info', (req) => {
        if (req.form.get('access_token') !== ACCESS || req.form.get('client_id') !== CLIENT_ID) return unauthorized
        return json({ user: { ...vkUser } })
      }),
    expected: {
      accountId: '1234567890',
      name: 'Ivan Ivanov',
      email: 'ivan@example.ru',
      image: 'https://pp.userapi.com/avatar.jpg',
      emailVerified: false,
      scope: 'email,phone',
    },
  },
  {
    id: 'zoom',
    auth: 'basic',
    pkce: true,
    endpoints: { userInfo: '/zoom/v2/users/me' },
    token: () => ({ access_token: ACCESS, token_type: 'bearer', refresh_token: 'r.zoom', expires_in: 3599, scope: 'user:read' }),
    routes: (f) =>
      f.on(
        'GET',
        '/zoom/v2/users/me',
        guarded(() => ({
          id: 'KDcuGIm1QgePTO8WbOqwIQ',
          first_name: 'Jill',
          last_name: 'Chill',
          display_name: 'Jill Chill',
          email: 'jchill@example.com',
          type: 2,
          pmi: 3542471135,
          timezone: 'Asia/Shanghai',
          verified: 1,
          pic_url: 'https://lh4.googleusercontent.com/avatar.png',
          status: 'active',
        })),
      ),
    authorizationChecks: (url) => expect(url.searchParams.has('scope')).toBe(false),
    expected: {
      accountId: 'KDcuGIm1QgePTO8WbOqwIQ',
      name: 'Jill Chill',
      email: 'jchill@example.com',
      image: 'https://lh4.googleusercontent.com/avatar.png',
      emailVerified: true,
      scope: 'user:read',
    },
  },
]

let gitlabUser: Record<string, unknown>
let vkUser: Record<string, unknown>

beforeEach(() => {
  gitlabUser = {
    id: 1,
    username: 'john_smith',
    email: 'john@example.com',
    name: 'John Smith',
    state: 'active',
    locked: false,
    avatar_url: 'https://gitlab.example.com/uploads/user/avatar/1/cd8.jpeg',
    web_url: 'https://gitlab.example.com/john_smith',
    created_at: '2012-05-23T08:00:58Z',
    confirmed_at: '2012-05-23T09:05:22Z',
  }
  vkUser = {
    user_id: '1234567890',
    first_name: 'Ivan',
    last_name: 'Ivanov',
    phone: '79991234567',
    avatar: 'https://pp.userapi.com/avatar.jpg',
    email: 'ivan@example.ru',
    sex: 2,
    verified: false,
    birthday: '01.01.2000',
  }
})

function endpointsFor(c: Case): Record<string, string> {
  const out: Record<string, string> = { authorization: `${fake.url}/${c.id}/authorize`, token: `${fake.url}/${c.id}/token` }
  for (const [name, path] of Object.entries(c.endpoints)) out[name] = `${fake.url}${path}`
  if (c.id === 'google') out.jwks = `${fake.url}/google/certs`
  return out
}

beforeAll(async () => {
  await fake.start()
  server = await startTestServer()
  const socialProviders: Record<string, unknown> = {}
  for (const c of cases) {
    socialProviders[c.id] = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, endpoints: endpointsFor(c), ...c.options }
  }
  server.gatehouse.config.update({ socialProviders })
})
afterAll(async () => {
  await server?.close()
  await fake.close()
})

/** The whole redirect flow for one provider; returns the callback answer and what the fake saw. */
async function runFlow(c: Case, overrides: { token?: () => Record<string, unknown> } = {}) {
  fake.reset()
  handlerProblems.length = 0
  c.routes(fake)
  let authorization: URL | null = null
  fake.on('POST', `/${c.id}/token`, (req) => checkToken(c, req, authorization, overrides.token ?? c.token))
  const browser = new Browser()
  const start = await browser.postJson(`${server.base}/sign-in/social`, { provider: c.id, callbackURL: '/done' }, server.origin)
  expect(start.status).toBe(200)
  authorization = new URL(((await start.json()) as { url: string }).url)
  const state = authorization.searchParams.get('state') as string
  const params: Record<string, string> = { code: `code-for-${c.id}`, state, ...c.callbackExtra }
  let callback: Response
  if (c.id === 'apple') {
    // form_post from appleid.apple.com: a cross-site POST carries no Lax cookies.
    const posted = await fetch(`${server.base}/callback/apple`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://appleid.apple.com' },
      body: new URLSearchParams(params),
    })
    expect(posted.status).toBe(302)
    const next = new URL(posted.headers.get('location') as string)
    expect(next.origin + next.pathname).toBe(`${server.base}/callback/apple`)
    expect(next.searchParams.get('user')).toBe(params.user ?? null)
    callback = await browser.request(next.toString())
  } else {
    callback = await browser.request(`${server.base}/callback/${c.id}?${new URLSearchParams(params)}`)
  }
  return { browser, callback, authorization, token: fake.calls('POST', `/${c.id}/token`) }
}

/** What each provider's token endpoint checks: grant, code, redirect URI, PKCE and client authentication. */
function checkToken(c: Case, req: RecordedRequest, authorization: URL | null, answer: () => Record<string, unknown>): FakeAnswer {
  const bad = (why: string): FakeAnswer => ({ status: 400, json: { error: 'invalid_grant', error_description: why } })
  if (!authorization) return bad('no authorization')
  const f = req.form
  if (f.get('grant_type') !== 'authorization_code') return bad('grant_type')
  if (f.get('code') !== `code-for-${c.id}`) return bad('code')
  if (f.get('redirect_uri') !== `${server.base}/callback/${c.id}`) return bad('redirect_uri')
  if (req.headers['content-type'] !== 'application/x-www-form-urlencoded;charset=UTF-8')
    return bad(`content-type ${req.headers['content-type']}`)
  const challenge = authorization.searchParams.get('code_challenge')
  if (c.pkce) {
    const verifier = f.get('code_verifier') ?? ''
    if (verifier.length !== 128 || s256(verifier) !== challenge) return bad('pkce')
  } else if (f.has('code_verifier') || challenge) return bad('unexpected pkce')
  if (c.auth === 'basic') {
    const creds = basicCredentials(req)
    if (creds?.id !== CLIENT_ID || creds.secret !== CLIENT_SECRET || f.has('client_secret')) return bad('basic auth')
  } else if (c.auth === 'tiktok') {
    if (f.get('client_key') !== 'tiktok-client-key' || f.get('client_secret') !== CLIENT_SECRET || f.has('client_id'))
      return bad('client_key')
  } else if (f.get('client_id') !== CLIENT_ID || f.get('client_secret') !== CLIENT_SECRET || req.headers.authorization)
    return bad('post auth')
  if (c.id === 'vk' && (f.get('device_id') !== 'device-42' || f.get('state') !== authorization.searchParams.get('state')))
    return bad('vk device_id')
  return json(answer())
}

describe('the 18 providers', () => {
  it('covers every provider of SPEC §1', () => {
    expect(cases.map((c) => c.id).sort()).toEqual([...PROVIDER_IDS].sort())
  })

  for (const c of cases) {
    it(`${c.id}: authorization URL, code exchange, profile mapping, account and session`, async () => {
      const { browser, callback, authorization } = await runFlow(c)
      expect(handlerProblems).toEqual([])
      expect(authorization.origin + authorization.pathname).toBe(`${fake.url}/${c.id}/authorize`)
      expect(authorization.searchParams.get('redirect_uri')).toBe(`${server.base}/callback/${c.id}`)
      expect(authorization.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{32}$/)
      expect(authorization.searchParams.has('code_challenge')).toBe(c.pkce)
      c.authorizationChecks?.(authorization)
      expect(callback.status).toBe(302)
      expect(callback.headers.get('location')).toBe('/done')
      const session = (await (await browser.request(`${server.base}/get-session`)).json()) as { user: Record<string, unknown> }
      const { accountId, scope, ...mapped } = c.expected
      expect(session.user).toMatchObject(mapped)
      const acc = await firstRow(server.gatehouse.ctx.db.select().from(account).where(eq(account.accountId, accountId)))
      expect(acc).toMatchObject({ providerId: c.id, userId: session.user.id })
      expect(acc?.accessToken).toMatch(/^enc:v1:/)
      expect(acc?.accessToken).not.toContain(ACCESS)
      // Every case names the scope it expects stored (null where the provider reports none).
      expect(acc?.scope).toBe(scope)
    })
  }
})

describe('provider special checks', () => {
  const byId = (id: ProviderId) => cases.find((c) => c.id === id) as Case

  it('gitlab refuses users that are not active or are locked (unable_to_get_user_info)', async () => {
    gitlabUser = { ...gitlabUser, id: 2, email: 'blocked@example.com', state: 'blocked' }
    expect((await runFlow(byId('gitlab'))).callback.headers.get('location')).toBe(`${server.base}/error?error=unable_to_get_user_info`)
    gitlabUser = { ...gitlabUser, id: 3, email: 'locked@example.com', state: 'active', locked: true }
    expect((await runFlow(byId('gitlab'))).callback.headers.get('location')).toBe(`${server.base}/error?error=unable_to_get_user_info`)
    const created = await firstRow(server.gatehouse.ctx.db.select().from(user).where(eq(user.email, 'locked@example.com')))
    expect(created).toBeUndefined()
  })

  it('gitlab follows a self-managed issuer for all three endpoints', () => {
    server.gatehouse.config.update({ socialProviders: { gitlab: { issuer: 'https://git.example.org//' } } })
    const rp = resolveBuiltInProvider(server.gatehouse.ctx, 'gitlab')
    // The fake's overrides still win; the issuer drives the defaults.
    expect(rp?.def.endpoints(rp.options)).toEqual({
      authorization: 'https://git.example.org/oauth/authorize',
      token: 'https://git.example.org/oauth/token',
      userInfo: 'https://git.example.org/api/v4/user',
    })
  })

  it('vk refuses a user without an email', async () => {
    vkUser = { ...vkUser, user_id: '77', email: undefined }
    const { callback } = await runFlow(byId('vk'))
    expect(callback.headers.get('location')).toBe(`${server.base}/error?error=unable_to_get_user_info`)
  })

  it('twitter without email access gets a placeholder address, never verified', async () => {
    const c = byId('twitter')
    const { browser, callback } = await runFlow({
      ...c,
      routes: (f) =>
        f.on('GET', '/twitter/2/users/me', (req) =>
          req.query.get('user.fields') === 'confirmed_email'
            ? { status: 403, json: { title: 'Forbidden' } }
            : json({ data: { id: '99', name: 'No Mail', username: 'nomail', profile_image_url: 'https://pbs.twimg.com/p.jpg' } }),
        ),
    })
    expect(callback.headers.get('location')).toBe('/done')
    const session = (await (await browser.request(`${server.base}/get-session`)).json()) as { user: Record<string, unknown> }
    expect(session.user).toMatchObject({ email: '99@twitter.placeholder.invalid', emailVerified: false, name: 'No Mail' })
  })

  it('microsoft fetches the 48 px photo with the bearer token by default', async () => {
    const rp = resolveBuiltInProvider(server.gatehouse.ctx, 'microsoft')
    expect(rp?.def.endpoints(rp.options).photo).toBe('https://graph.microsoft.com/v1.0/me/photos/48x48/$value')
    expect(rp?.def.endpoints({ ...rp.options, tenantId: 'contoso.onmicrosoft.com' }).authorization).toBe(
      'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize',
    )
    const { callback } = await runFlow(byId('microsoft'))
    expect(callback.status).toBe(302)
    const photo = fake.calls('GET', '/microsoft/v1.0/me/photos/48x48/$value')
    expect(photo).toHaveLength(1)
    expect(photo[0]?.headers.authorization).toBe(`Bearer ${ACCESS}`)
  })

  it('apple takes the name only from the first sign-in and keeps it afterwards', async () => {
    const c = byId('apple')
    const { callback } = await runFlow({ ...c, callbackExtra: {} })
    expect(callback.headers.get('location')).toBe('/done')
    const stored = await firstRow(server.gatehouse.ctx.db.select().from(user).where(eq(user.email, 'ada@privaterelay.appleid.com')))
    expect(stored?.name).toBe('Ada Lovelace')
  })

  it('refuses an ID token from the token endpoint with a foreign audience (unable_to_get_user_info)', async () => {
    const c = byId('google')
    const claims = {
      iss: 'https://accounts.google.com',
      aud: 'someone-else',
      sub: '1',
      email: 'x@gmail.com',
      email_verified: true,
      iat: now(),
      exp: now() + 3600,
    }
    const { callback } = await runFlow(c, { token: () => ({ access_token: ACCESS, token_type: 'Bearer', id_token: unsignedJwt(claims) }) })
    expect(callback.headers.get('location')).toBe(`${server.base}/error?error=unable_to_get_user_info`)
  })

  it('google needs both a client id and a client secret: CLIENT_ID_AND_SECRET_REQUIRED', async () => {
    server.gatehouse.config.update({ socialProviders: { google: { clientSecret: '' } } })
    try {
      const res = await new Browser().postJson(`${server.base}/sign-in/social`, { provider: 'google' }, server.origin)
      expect(res.status).toBe(500)
      expect(await res.json()).toEqual({ code: 'CLIENT_ID_AND_SECRET_REQUIRED', message: 'CLIENT_ID_AND_SECRET_REQUIRED' })
    } finally {
      server.gatehouse.config.update({ socialProviders: { google: { clientSecret: CLIENT_SECRET } } })
    }
  })

  it('a token endpoint error (GitHub answers 200 with an error field) redirects with invalid_code', async () => {
    const c = byId('github')
    const { callback } = await runFlow(c, {
      token: () => ({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' }),
    })
    expect(callback.headers.get('location')).toBe(`${server.base}/error?error=invalid_code`)
  })
})

/**
 * Issue 11: every documented claim that can mark a provider's address verified, through the
 * whole callback; and the negative of each (the claim absent or naming another address).
 */
describe('verified-email claims', () => {
  const byId = (id: ProviderId) => cases.find((c) => c.id === id) as Case
  let n = 0

  async function microsoftUser(extra: Record<string, unknown>, fixedEmail?: string) {
    n += 1
    const email = fixedEmail ?? `megan${n}@contoso.com`
    const claims = {
      aud: CLIENT_ID,
      iss: 'https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0',
      iat: now(),
      nbf: now(),
      exp: now() + 3600,
      name: 'Megan Bowen',
      email,
      sub: `ms-claims-${n}`,
      tid: '9188040d-6c67-4c5b-b112-36a304b66dad',
      ver: '2.0',
      ...extra,
    }
    for (const [k, v] of Object.entries(claims)) if (v === '$email') (claims as Record<string, unknown>)[k] = [email]
    const { browser, callback } = await runFlow(byId('microsoft'), {
      token: () => ({ token_type: 'Bearer', access_token: ACCESS, expires_in: 3599, id_token: unsignedJwt(claims) }),
    })
    expect(callback.headers.get('location')).toBe('/done')
    const session = (await (await browser.request(`${server.base}/get-session`)).json()) as {
      user: { email: string; emailVerified: boolean }
    }
    expect(session.user.email).toBe(email)
    return session.user as { id: string; email: string; emailVerified: boolean }
  }

  it('microsoft: an address vouched for by verified_primary_email links to the existing account with it', async () => {
    const email = `existing.${Date.now().toString(36)}@contoso.com`
    const existing = await signUp(server.base, { email })
    const signedIn = await microsoftUser({ verified_primary_email: '$email' }, email)
    expect(signedIn.id).toBe(existing.user.id)
    const linked = await server.gatehouse.ctx.db.select().from(account).where(eq(account.userId, existing.user.id))
    expect(linked.map((a) => a.providerId).sort()).toEqual(['credential', 'microsoft'])
  })

  it('microsoft: without a verification claim the same link is refused (account_not_linked)', async () => {
    const email = `unlinked.${Date.now().toString(36)}@contoso.com`
    await signUp(server.base, { email })
    n += 1
    const claims = {
      aud: CLIENT_ID,
      iss: 'https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0',
      iat: now(),
      exp: now() + 3600,
      name: 'No Claim',
      email,
      sub: `ms-claims-${n}`,
      tid: '9188040d-6c67-4c5b-b112-36a304b66dad',
    }
    const { callback } = await runFlow(byId('microsoft'), {
      token: () => ({ token_type: 'Bearer', access_token: ACCESS, expires_in: 3599, id_token: unsignedJwt(claims) }),
    })
    expect(callback.headers.get('location')).toMatch(/error=account_not_linked/)
  })

  it('microsoft: verified_primary_email listing the address marks it verified (no email_verified)', async () => {
    expect((await microsoftUser({ verified_primary_email: '$email' })).emailVerified).toBe(true)
  })

  it('microsoft: verified_secondary_email listing the address marks it verified', async () => {
    expect((await microsoftUser({ verified_secondary_email: '$email' })).emailVerified).toBe(true)
  })

  it('microsoft: xms_edov true marks it verified; false or absent does not', async () => {
    expect((await microsoftUser({ xms_edov: true })).emailVerified).toBe(true)
    expect((await microsoftUser({ xms_edov: false })).emailVerified).toBe(false)
    expect((await microsoftUser({})).emailVerified).toBe(false)
  })

  it('microsoft: verified_primary_email naming another address does not vouch for this one', async () => {
    expect((await microsoftUser({ verified_primary_email: ['someone.else@contoso.com'] })).emailVerified).toBe(false)
  })

  it('microsoft: an explicit email_verified decides over the other claims', async () => {
    expect((await microsoftUser({ email_verified: false, verified_primary_email: '$email', xms_edov: true })).emailVerified).toBe(false)
    expect((await microsoftUser({ email_verified: 'true' })).emailVerified).toBe(true)
  })
})
