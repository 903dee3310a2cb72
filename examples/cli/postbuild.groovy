// After the build: every jar the CLI's manifest puts on its class path is in target/cli/lib,
// at the version the manifest names. The JVM skips a missing Class-Path entry silently, so a
// published POM that resolves another version would only show as a NoClassDefFoundError later.
import java.util.jar.JarFile

def cli = new File(basedir, 'target/cli')
def jars = cli.listFiles().findAll { it.name.startsWith('locksmith-cli-') && it.name.endsWith('.jar') }
assert jars.size() == 1 : "expected one locksmith-cli jar in ${cli}, found ${jars*.name}"
def manifest = new JarFile(jars[0]).withCloseable { it.manifest.mainAttributes }
assert manifest.getValue('Main-Class') == 'dev.locksmith.cli.Locksmith'
def entries = manifest.getValue('Class-Path').trim().split(/\s+/)
def missing = entries.findAll { !new File(cli, it).isFile() }
assert missing.isEmpty() : "named in the manifest's Class-Path but not resolved from the published POM: ${missing}"
println "locksmith-cli: ${entries.size()} class path entries, all resolved"
return true
