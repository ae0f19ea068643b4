// debian/copyright (DEP-5) of the packages: Guard under Apache-2.0, the Node.js runtime they
// carry under its MIT licence (its bundled libraries under their own licences, listed in
// Node.js's LICENSE file), the npm packages bundled into the agent and the server under theirs.

const MIT = `Permission is hereby granted, free of charge, to any person obtaining a copy
 of this software and associated documentation files (the "Software"), to deal
 in the Software without restriction, including without limitation the rights
 to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 copies of the Software, and to permit persons to whom the Software is
 furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in
 all copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
 THE SOFTWARE.`;

export function copyright(name: string, runtimeFiles: string, bundled: string): string {
  return `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ${name}
Comment: Guard, self-hostable host-security tooling.

Files: *
Copyright: 2026 Guard contributors
License: Apache-2.0

Files: ${runtimeFiles}
Copyright: Node.js contributors, Joyent, Inc. and other Node contributors
Comment: The Node.js ${process.versions.node.split('.')[0]} runtime. It bundles V8, libuv, OpenSSL,
 ICU, zlib, brotli, nghttp2, SQLite, llhttp and other libraries, each under its own
 licence (MIT, BSD, Apache-2.0, Unicode-DFS-2016 and others), listed in the LICENSE file of
 the Node.js source distribution of this version. ${bundled}
License: MIT

License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.

License: MIT
 ${MIT}
`;
}
