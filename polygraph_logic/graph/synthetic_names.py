"""The names the synthetic generator gives entities: real ones first, then made-up ones.

``NAMES`` holds the frequent entities per kind, ``;`` between entities and ``|`` between a
name and its aliases; ``FAMILIES`` and ``PARTS`` make the long tail (see
``synthetic._tail_name``).
"""

# The frequent entities: real names, "|" separating a name from its aliases.
NAMES = {
    "gene": "TP53|p53;KRAS;EGFR;MYC|c-Myc;PIK3CA;PTEN;BRAF;AKT1;MTOR|mTOR;ERBB2|HER2;CDKN2A|p16INK4a;RB1;BRCA1;BRCA2;"
            "APC;CTNNB1|beta-catenin;VEGFA|VEGF;STAT3;NFKB1|NF-kB p50;BCL2|Bcl-2;BAX;CASP3|caspase-3;CASP9|caspase-9;"
            "MDM2;CDK4;CDK6;CCND1|cyclin D1;HIF1A|HIF-1alpha;JAK2;SRC;NOTCH1;SMAD4;TGFB1|TGF-beta1;IL6|IL-6;"
            "TNF|TNF-alpha;MAPK1|ERK2;MAPK3|ERK1;MAP2K1|MEK1;RAF1;NRAS;HRAS;ALK;MET;FGFR1;KIT;ATM;ATR;CHEK2;PARP1;"
            "MLH1;MSH2;EZH2;IDH1;TERT;SOX2;POU5F1|OCT4;CD44;EPCAM;VIM|vimentin;CDH1|E-cadherin;SNAI1|Snail;TWIST1;"
            "ZEB1;MMP2;MMP9;CD274|PD-L1;PDCD1|PD-1;CTLA4;FOXO3;GSK3B;YAP1|YAP;AIM2;NLRP3;GSDMD;IL1B|IL-1beta;"
            "CXCL8|IL-8;SIRT1;BECN1|Beclin 1;MAP1LC3B|LC3B;SQSTM1|p62;KEAP1;NFE2L2|NRF2;HMGB1;MKI67|Ki-67;PCNA;"
            "ESR1|ER-alpha;AR",
    "process": "apoptosis|apoptotic process;cell proliferation|proliferation;autophagy;angiogenesis;"
               "epithelial-mesenchymal transition|EMT;cell migration;cell invasion;DNA repair;cell cycle arrest;"
               "cellular senescence|senescence;inflammatory response|inflammation;glycolysis|aerobic glycolysis;"
               "ferroptosis;pyroptosis;necroptosis;DNA damage response|DDR;"
               "MAPK/ERK signalling|MAPK/ERK pathway|ERK1/2 cascade;PI3K/AKT signalling|PI3K/AKT pathway;"
               "Wnt signalling|Wnt pathway;Notch signalling;Hedgehog signalling;JAK/STAT signalling|JAK-STAT pathway;"
               "NF-kB signalling|NF-kB pathway;TGF-beta signalling;Hippo signalling;mTOR signalling;"
               "oxidative phosphorylation|OXPHOS;immune response;T cell activation;macrophage polarization;"
               "reactive oxygen species production|ROS production;response to hypoxia|hypoxia response;"
               "unfolded protein response|UPR;telomere maintenance;DNA methylation;chromatin remodelling;"
               "cell adhesion;anoikis;mitophagy;lipid metabolism;response to drug|drug response",
    "component": "nucleus;cytoplasm;cytosol;mitochondrion|mitochondria;plasma membrane|cell membrane;"
                 "endoplasmic reticulum|ER;Golgi apparatus;lysosome;autophagosome;extracellular vesicle|exosome;"
                 "extracellular matrix|ECM;chromatin;nucleolus;centrosome;focal adhesion;"
                 "inflammasome complex|inflammasome;proteasome complex|proteasome;nuclear envelope;"
                 "mitochondrial outer membrane",
    "disease": "breast cancer|breast carcinoma;lung adenocarcinoma|LUAD;non-small cell lung cancer|NSCLC;"
               "colorectal cancer|CRC;hepatocellular carcinoma|HCC;gastric cancer;"
               "pancreatic ductal adenocarcinoma|PDAC;glioblastoma|GBM;melanoma;prostate cancer;ovarian cancer;"
               "cervical cancer;oral squamous cell carcinoma|OSCC;oral carcinoma;"
               "head and neck squamous cell carcinoma|HNSCC;acute myeloid leukemia|AML;multiple myeloma;"
               "diffuse large B-cell lymphoma|DLBCL;renal cell carcinoma|RCC;bladder cancer;thyroid cancer;"
               "esophageal squamous cell carcinoma|ESCC;nasopharyngeal carcinoma|NPC;osteosarcoma;neuroblastoma;"
               "endometrial cancer;cholangiocarcinoma;triple-negative breast cancer|TNBC",
    "drug": "cisplatin|DDP;paclitaxel|Taxol;doxorubicin|Adriamycin;5-fluorouracil|5-FU;gemcitabine;temozolomide|TMZ;"
            "gefitinib|Iressa;erlotinib|Tarceva;osimertinib;imatinib|Gleevec;sorafenib;lenvatinib;"
            "trastuzumab|Herceptin;bevacizumab|Avastin;cetuximab;pembrolizumab|Keytruda;nivolumab;olaparib|Lynparza;"
            "palbociclib;everolimus;rapamycin|sirolimus;metformin;curcumin;resveratrol;quercetin;docetaxel;"
            "oxaliplatin;tamoxifen;vemurafenib",
}
# The long tail: names combined from parts (by mixed radix), so any number can be drawn.
FAMILIES = "ZNF SLC7A TMEM CCDC FAM LINC MIR ANKRD KLF TRIM USP RNF".split()
SYLLABLES = "ra lo ti va de zo mi ne pa ku sa bre fo xi".split()
PARTS = {kind: tuple(part.split(";") for part in parts) for kind, parts in {
    "process": ("glucose ;lipid ;glutamine ;collagen ;T cell ;B cell ;epithelial cell ;fibroblast ;endothelial cell ;"
                "stem cell ;macrophage ;keratinocyte ;iron ;cholesterol ;purine ",
                "metabolic process;migration;differentiation;transport;biosynthetic process;homeostasis;secretion;"
                "activation", ";regulation of ;positive regulation of ;negative regulation of ;cellular response to "),
    "disease": ("tongue ;laryngeal ;gallbladder ;uveal ;salivary gland ;vulvar ;anal ;penile ;testicular ;adrenal ;"
                "thymic ;biliary ;small intestine ;peritoneal ;pleural ;skin ;bone ;soft tissue ",
                "carcinoma;adenocarcinoma;sarcoma;cancer;neoplasm;squamous cell carcinoma",
                ";metastatic ;recurrent ;early-stage ;paediatric "),
    "drug": (";".join(SYLLABLES), ";".join(SYLLABLES), "tinib;mab;ciclib;parib;platin;taxel;rafenib;lisib"),
}.items()}
