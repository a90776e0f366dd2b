import { defineConfig } from 'vite';

/**
 * The web app is bundled once (at `npm install`, or `npm run build:web`) into `web/dist`, which
 * the service serves at `/`: no CDN, nothing fetched at run time. `npm run dev:web` serves it
 * with reload and forwards `/api` to a service on port 3000.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Inline nothing: a strict Content-Security-Policy (no data: scripts) serves the bundle.
    assetsInlineLimit: 0,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:3000', '/docs': 'http://127.0.0.1:3000' },
  },
});
