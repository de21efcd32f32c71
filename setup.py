"""Installs prism_nb from the settings in `settings.ini` (the nbdev 2 convention)."""
from configparser import ConfigParser
import setuptools

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']

licenses = {'apache2': ('Apache Software License 2.0', 'OSI Approved :: Apache Software License')}
lic = licenses[cfg['license']]
requirements = cfg.get('requirements', '').split()
dev_requirements = cfg.get('dev_requirements', '').split()
cluster_requirements = cfg.get('cluster_requirements', '').split()

setuptools.setup(
    name=cfg['lib_name'],
    version=cfg['version'],
    description=cfg['description'],
    long_description=open('README.md', encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    license=lic[0],
    # no author_email and no url: settings.ini's are nbdev's placeholders (no such address, no such repository)
    author=cfg['author'],
    keywords=cfg['keywords'],
    classifiers=[
        'Development Status :: ' + ['1 - Planning', '2 - Pre-Alpha', '3 - Alpha', '4 - Beta', '5 - Production/Stable'][int(cfg['status']) - 1],
        'Intended Audience :: ' + cfg['audience'].title(),
        'License :: ' + lic[1],
        'Natural Language :: ' + cfg['language'].title(),
        'Programming Language :: Python :: 3',
    ],
    packages=setuptools.find_packages(include=['prism_nb', 'prism_nb.*']),
    include_package_data=True,
    package_data={'prism_nb': ['*.json']},  # the data files' checksums (hapt_sha256.json, uci_har_signal_blobs.json)
    python_requires='>=' + cfg['min_python'],
    install_requires=requirements,
    extras_require={'dev': dev_requirements, 'cluster': cluster_requirements},
    entry_points={
        'nbdev': [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"],
        'console_scripts': ['prism_protocol=prism_nb.protocol:prism_protocol',  # the tuning protocol for your method
                            'prism_leaderboard=prism_nb.protocol:prism_leaderboard'],  # and its leaderboard
    },
    zip_safe=False,
)
