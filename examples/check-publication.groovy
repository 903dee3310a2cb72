// The publication check (gmavenplus, verify phase of locksmith-examples, after every published
// module has been packaged, and signed under -Prelease with a key). Nothing here is a hand list:
//
// 1. What is published is derived from the build: every project of this reactor whose
//    maven.deploy.skip is not true. locksmith-bom must list exactly those (the BOM aside), so a
//    module that deploys without being in the BOM, or a BOM entry that does not deploy, fails.
// 2. For every published project, what deploy would upload is checked against what Maven
//    Central requires: the jar, a -sources.jar with .java files, a -javadoc.jar with an
//    index.html; a POM (the flattened one) with name, description, url, licenses (name, url),
//    developers, scm (url, connection, developerConnection), no parent (locksmith-parent is not
//    published) and no unresolved property but ${project.version} in the BOM; and, when signing
//    is on, an .asc signature attached for every one of those files.
import java.util.zip.ZipFile
import javax.xml.parsers.DocumentBuilderFactory

def bomArtifactId = 'locksmith-bom'
def problems = []
def userProps = session.userProperties

def truthy = { String value -> value != null && value.trim().equalsIgnoreCase('true') }
def prop = { p, String name -> userProps.getProperty(name) ?: p.properties.getProperty(name) }
def published = { p -> !truthy(prop(p, 'maven.deploy.skip')) }
def gav = { p -> "${p.groupId}:${p.artifactId}" }
// Signing is on where maven-gpg-plugin's sign goal is bound (profile release-signing, active when
// a key is named); it skips itself exactly in the modules that are not published.
def signs = { p ->
    p.buildPlugins.any { it.artifactId == 'maven-gpg-plugin' && it.executions.any { e -> 'sign' in e.goals } }
}

def projects = session.projects
def toPublish = projects.findAll { published(it) }
if (toPublish.contains(project)) {
    problems << "${gav(project)} runs this check and must not be published itself"
}

// 1. The BOM lists what is published.
def bom = projects.find { it.artifactId == bomArtifactId }
if (bom == null) {
    log.warn("publication check: ${bomArtifactId} is not part of this build; the list of published modules is not compared")
} else if (!published(bom)) {
    problems << "${bomArtifactId} itself skips deploy"
} else {
    def listed = (bom.originalModel.dependencyManagement?.dependencies ?: []).collect { "${it.groupId}:${it.artifactId}".toString() } as Set
    def deployed = toPublish.findAll { it != bom }.collect { gav(it).toString() } as Set
    (deployed - listed).each { problems << "${it} is published (maven.deploy.skip is not true) but not listed in ${bomArtifactId}: list it, or set maven.deploy.skip to true in its pom.xml" }
    (listed - deployed).each { entry ->
        def p = projects.find { gav(it) == entry }
        problems << (p == null
                ? "${entry} is listed in ${bomArtifactId} but not built before this check: add it to examples/pom.xml's dependencies"
                : "${entry} is listed in ${bomArtifactId} but skips deploy (maven.deploy.skip)")
    }
}

// 2. Every published project's files.
def xml = { File f ->
    def factory = DocumentBuilderFactory.newInstance()
    factory.namespaceAware = false
    factory.newDocumentBuilder().parse(f).documentElement
}
def children = { el, String name ->
    if (el == null) return []
    def nodes = el.childNodes
    (0..<nodes.length).collect { nodes.item(it) }.findAll { it.nodeType == 1 && it.nodeName == name }
}
def child = { el, String name -> children(el, name).find() }
def text = { el, String name -> child(el, name)?.textContent?.trim() }
def zipHas = { File f, Closure<Boolean> test ->
    new ZipFile(f).withCloseable { zip -> zip.entries().toList().any { test(it.name) } }
}

def report = []
toPublish.each { p ->
    def id = gav(p)
    def signing = signs(p)
    // name (for messages) -> [file, classifier, extension]
    def files = [:]
    if (p.packaging != 'pom') {
        def main = p.artifact.file
        if (main == null || !main.isFile()) {
            problems << "${id}: no ${p.packaging} built before this check: add it to examples/pom.xml's dependencies"
        } else {
            files['jar'] = [main, null, p.artifact.artifactHandler.extension]
        }
        ['sources', 'javadoc'].each { classifier ->
            def a = p.attachedArtifacts.find { it.classifier == classifier && it.type != null && !it.artifactHandler.extension.endsWith('.asc') }
            if (a == null || a.file == null || !a.file.isFile()) {
                problems << "${id}: no -${classifier}.jar attached (maven-${classifier == 'sources' ? 'source' : 'javadoc'}-plugin skipped?)"
            } else {
                files["${classifier}.jar".toString()] = [a.file, classifier, 'jar']
            }
        }
        if (files['sources.jar'] && !zipHas(files['sources.jar'][0], { it.endsWith('.java') })) {
            problems << "${id}: the sources jar holds no .java file"
        }
        if (files['javadoc.jar'] && !zipHas(files['javadoc.jar'][0], { it == 'index.html' })) {
            problems << "${id}: the javadoc jar holds no index.html"
        }
    }

    // The POM deploy uploads is project.file: the flattened one when flatten-maven-plugin ran.
    def pom = p.file
    if (pom.name != 'flattened-pom.xml') {
        problems << "${id}: its POM is not flattened (${pom.name}); the published POM would name an unpublished parent"
    }
    files['pom'] = [pom, null, 'pom']
    def root = xml(pom)
    ['groupId', 'artifactId', 'version', 'name', 'description', 'url'].each {
        if (!text(root, it)) problems << "${id}: POM has no <${it}>"
    }
    if (child(root, 'parent') != null) {
        problems << "${id}: POM names a parent, and locksmith-parent is not published"
    }
    def licenses = children(child(root, 'licenses'), 'license')
    if (licenses.isEmpty()) problems << "${id}: POM has no <licenses>"
    licenses.each { l -> ['name', 'url'].each { if (!text(l, it)) problems << "${id}: a <license> has no <${it}>" } }
    def developers = child(root, 'developers')
    if (child(developers, 'developer') == null) problems << "${id}: POM has no <developers>"
    else if (!text(child(developers, 'developer'), 'name')) problems << "${id}: a <developer> has no <name>"
    def scm = child(root, 'scm')
    ['url', 'connection', 'developerConnection'].each {
        if (!text(scm, it)) problems << "${id}: POM has no <scm><${it}>"
    }
    def unresolved = (pom.text =~ /\$\{[^}]*\}/).collect { it } as Set
    if (p.artifactId == bomArtifactId) unresolved -= '${project.version}'
    unresolved.each { problems << "${id}: POM has the unresolved property ${it}" }

    if (signing) {
        files.each { name, f ->
            def (file, classifier, extension) = f
            def asc = p.attachedArtifacts.find { it.classifier == classifier && it.artifactHandler.extension == "${extension}.asc" }
            if (asc == null || asc.file == null || !asc.file.isFile()) {
                problems << "${id}: no signature (.asc) for its ${name}"
            } else {
                files[name] = f + [asc.file]
            }
        }
    }
    report << "  ${id}: " + files.collect { name, f -> f.size() > 3 ? "${name} (+.asc)" : name }.join(', ')
}

log.info("publication check: ${toPublish.size()} published projects in this build, signatures ${toPublish.any { signs(it) } ? 'required' : 'not required (no key named: see the release-signing profile)'}")
report.each { log.info(it.toString()) }
def unpublished = projects.findAll { !published(it) }.collect { it.artifactId }
log.info("  not published (maven.deploy.skip): ${unpublished.join(', ')}")
if (!problems.isEmpty()) {
    problems.each { log.error("publication check: ${it}") }
    throw new IllegalStateException("publication check: ${problems.size()} problem(s), listed above")
}
log.info('publication check: passed')
