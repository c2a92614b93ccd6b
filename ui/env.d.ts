// esbuild bundles the stylesheet the entry imports into dist/ui/assets/app-[hash].css.
declare module '*.css';
