'use strict'

const path = require('node:path')

/**
 * The java launcher: `$JAVA_HOME/bin/java` when JAVA_HOME is set, else `java` from PATH.
 * @returns {string}
 */
function javaBin () {
  return process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java'
}

/**
 * The JDK 17 flags HBase's own launcher passes: its shaded netty and Hadoop reach into JDK internals.
 * @returns {string[]}
 */
function javaFlags () {
  const opens = ['java.nio', 'sun.nio.ch', 'java.lang', 'jdk.internal.ref', 'java.lang.reflect', 'java.util', 'java.util.concurrent']
  const exports = ['java.base/jdk.internal.misc', 'java.base/sun.net.dns', 'java.base/sun.net.util', 'java.security.jgss/sun.security.krb5']
  return [
    '-Djava.net.preferIPv4Stack=true',
    '-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true',
    '--add-modules', 'jdk.unsupported',
    ...opens.flatMap((pkg) => ['--add-opens', `java.base/${pkg}=ALL-UNNAMED`]),
    ...exports.flatMap((pkg) => ['--add-exports', `${pkg}=ALL-UNNAMED`])
  ]
}

// A tool run (setup, shutdown, a look at the cluster, a dump) lives seconds: compiling its hot
// code with C2 and running G1's worker threads cost more CPU than they save.
const SHORT_LIVED = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC']

/**
 * The flags of a short-lived JVM: HBase's own (javaFlags()) plus a JIT and a collector for a run of
 * seconds. Not for HBase's servers or a load generator, which run long and hot.
 * @returns {string[]}
 */
function shortLivedJavaFlags () {
  return [...javaFlags(), ...SHORT_LIVED]
}

/**
 * The flags of an HBase server JVM of the given profile (tools/dev-hbase options, BEACON_HBASE_JVM):
 * `server` runs long and hot (`npm start`, the bench); `light` is for instances a test starts,
 * kills and restarts within minutes under modest load, where C2's compilations and G1's threads
 * cost more CPU than the code they speed up gives back.
 * @param {'server'|'light'} profile
 * @returns {string[]}
 */
function serverJavaFlags (profile) {
  return profile === 'light' ? shortLivedJavaFlags() : javaFlags()
}

/**
 * The same for javac, whose own JVM takes them through `-J`.
 * @returns {string[]}
 */
function javacFlags () {
  return SHORT_LIVED.map((flag) => `-J${flag}`)
}

module.exports = { javaBin, javaFlags, shortLivedJavaFlags, serverJavaFlags, javacFlags }
