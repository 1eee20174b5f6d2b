// What the sellers on other access points are and sell, for the invoices of inbound.ts: names as
// sellers write them and goods and services with their codes, units and price ranges.

export type PostalAddress = {
  street_name: string;
  city_name: string;
  postal_zone: string;
  lga: string;
  state: string;
  country: string;
};

export const address = (street: string, city: string, zone: string, lga: string): PostalAddress => ({
  street_name: street,
  city_name: city,
  postal_zone: zone,
  lga,
  state: lga.slice(0, 5),
  country: "NG",
});

// Names as sellers write them: Yoruba and Igbo diacritics, ampersands, long registered names. The
// LGAs are the ones the simulator's `lgas` list holds.
export const SELLERS: readonly { name: string; description: string; address: PostalAddress }[] = [
  {
    name: "Ọ̀yọ́ Foods Ltd",
    description: "Processing and wholesale of packaged foods",
    address: address("21 Iwo Road", "Ibadan", "200001", "NG-OY-INO"),
  },
  {
    name: "Àdìsá Paints & Chemicals Ltd",
    description: "Manufacture of paints and coatings",
    address: address("7 Oba Akran Avenue", "Ikeja", "100271", "NG-LA-IKE"),
  },
  {
    name: "Ẹ̀kọ́ Atlantic Marine & Offshore Logistics Services Nigeria Limited",
    description: "Marine logistics and offshore supply",
    address: address("Plot 4 Admiralty Way, Lekki Phase 1", "Lagos", "106104", "NG-LA-EOS"),
  },
  {
    name: "Kano Textiles & Garments Ltd",
    description: "Weaving and wholesale of textiles",
    address: address("12 Bompai Road", "Kano", "700001", "NG-KN-NAS"),
  },
  {
    name: "Ṣàngótẹ̀dó Integrated Agricultural Processing, Storage & Distribution Company Nigeria Limited",
    description: "Grain processing, storage and distribution",
    address: address("Km 9 Ibadan–Ife Road", "Ibadan", "200005", "NG-OY-INO"),
  },
  {
    name: "Port Harcourt Pipe & Valve Supplies Ltd",
    description: "Wholesale of pipes, valves and fittings",
    address: address("33 Trans-Amadi Road", "Port Harcourt", "500272", "NG-RI-PHA"),
  },
  {
    name: "Nkechi & Obinna Pharmaceuticals Ltd",
    description: "Wholesale of pharmaceutical products",
    address: address("9 Ehi Road", "Aba", "450001", "NG-AB-ANO"),
  },
  {
    name: "Ọ̀ṣun Springs Bottling Company Ltd",
    description: "Bottling of natural spring water",
    address: address("41 Ngwa Road", "Aba", "450002", "NG-AB-ASO"),
  },
  {
    name: "Ụ̀mụ̀ahịa Electricals & Solar Co. Ltd",
    description: "Sale and installation of solar systems",
    address: address("5 Bende Road", "Bende", "440101", "NG-AB-BEN"),
  },
  {
    name: "Wuse Office Hub Ltd",
    description: "Office supplies and computer equipment",
    address: address("Plot 1021 Aminu Kano Crescent, Wuse II", "Abuja", "900288", "NG-FC-AMA"),
  },
  {
    name: "Ọmọ́lúàbí Haulage & Logistics Ltd",
    description: "Road haulage and warehousing",
    address: address("18 Allen Avenue", "Ikeja", "100281", "NG-LA-IKE"),
  },
  {
    name: "Arọ́chukwu Building Materials Depot",
    description: "Wholesale of building materials",
    address: address("2 Market Road", "Arochukwu", "442101", "NG-AB-ARO"),
  },
];

export type Product = {
  name: string;
  description: string;
  /** [client] `NNNN.NN`; services carry an ISIC class and category instead [client]. */
  hsn?: string;
  isic?: string;
  category: string;
  /** A Rec. 20 unit code (at most 3 characters), and the words some APPs write instead. */
  unit: string;
  per: string;
  /** The price range in naira. */
  min: number;
  max: number;
  /** Sold in quarters (litres, metres, hours) rather than whole units. */
  fractional?: boolean;
};

export const PRODUCTS: readonly Product[] = [
  {
    name: "Parboiled rice 50 kg",
    description: "Long-grain parboiled rice, 50 kg bag",
    hsn: "1006.30",
    category: "Rice",
    unit: "BG",
    per: "bag",
    min: 62_000,
    max: 78_000,
  },
  {
    name: "Portland cement 50 kg",
    description: "Grade 42.5R, 50 kg bag",
    hsn: "2523.29",
    category: "Portland cement",
    unit: "BG",
    per: "bag",
    min: 8_500,
    max: 11_000,
  },
  {
    name: "Rebar 12 mm",
    description: "12 mm deformed bar, 12 m",
    hsn: "7214.20",
    category: "Iron or non-alloy steel bars",
    unit: "H87",
    per: "piece",
    min: 9_500,
    max: 14_000,
  },
  {
    name: "Laptop computer 14 in",
    description: "Core i5, 16 GB RAM, 512 GB SSD",
    hsn: "8471.30",
    category: "Portable data-processing machines",
    unit: "H87",
    per: "piece",
    min: 450_000,
    max: 1_250_000,
  },
  {
    name: "Vegetable oil 25 L",
    description: "Refined palm olein, 25 litre keg",
    hsn: "1511.90",
    category: "Palm oil",
    unit: "EA",
    per: "keg",
    min: 38_000,
    max: 52_000,
  },
  {
    name: "Automotive gas oil",
    description: "Diesel, delivered by tanker",
    hsn: "2710.19",
    category: "Gas oils",
    unit: "LTR",
    per: "litre",
    min: 1_150,
    max: 1_450,
    fractional: true,
  },
  {
    name: "Emulsion paint 20 L",
    description: "Interior emulsion, white, 20 litres",
    hsn: "3209.10",
    category: "Paints and varnishes",
    unit: "EA",
    per: "bucket",
    min: 42_000,
    max: 65_000,
  },
  {
    name: "Cotton ankara fabric",
    description: "Printed cotton wax fabric, 115 cm wide",
    hsn: "5208.52",
    category: "Woven cotton fabrics",
    unit: "MTR",
    per: "metre",
    min: 1_800,
    max: 4_500,
    fractional: true,
  },
  {
    name: "Solar panel 450 W",
    description: "Monocrystalline PV module, 450 W",
    hsn: "8541.43",
    category: "Photovoltaic modules",
    unit: "H87",
    per: "piece",
    min: 95_000,
    max: 160_000,
  },
  {
    name: "Paracetamol 500 mg",
    description: "Carton of 100 packs of 96 tablets",
    hsn: "3004.90",
    category: "Medicaments",
    unit: "EA",
    per: "carton",
    min: 18_000,
    max: 32_000,
  },
  {
    name: "PVC pipe 4 in",
    description: "Pressure pipe, 110 mm, 6 m length",
    hsn: "3917.23",
    category: "Tubes and pipes of PVC",
    unit: "H87",
    per: "length",
    min: 7_800,
    max: 12_500,
  },
  {
    name: "Spring water 75 cl",
    description: "Pack of 12 bottles",
    hsn: "2201.10",
    category: "Mineral waters",
    unit: "EA",
    per: "pack",
    min: 1_800,
    max: 2_600,
  },
  {
    name: "Tomato paste 400 g",
    description: "Carton of 24 tins",
    hsn: "2002.90",
    category: "Tomatoes, prepared",
    unit: "EA",
    per: "carton",
    min: 21_000,
    max: 27_500,
  },
  {
    name: "Haulage Lagos to Kano",
    description: "30-tonne truck, door to door",
    isic: "4923",
    category: "Freight transport by road",
    unit: "EA",
    per: "trip",
    min: 650_000,
    max: 1_100_000,
  },
  {
    name: "Generator maintenance",
    description: "Servicing of a 500 kVA generator set",
    isic: "3312",
    category: "Repair of machinery",
    unit: "HUR",
    per: "hour",
    min: 15_000,
    max: 45_000,
    fractional: true,
  },
  {
    name: "Warehousing",
    description: "Pallet storage, per pallet per month",
    isic: "5210",
    category: "Warehousing and storage",
    unit: "EA",
    per: "pallet",
    min: 4_500,
    max: 9_000,
  },
];
