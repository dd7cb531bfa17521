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

module.exports = { javaBin, javaFlags }
